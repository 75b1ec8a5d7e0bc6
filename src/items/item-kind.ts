/** What an item is; its folder under `.ai/` and the file extensions it may have, in priority order. */
export type ItemKind = 'directive' | 'tool' | 'knowledge';

/** The folder of each kind under a space's `.ai/`. */
export const KIND_DIRS: Record<ItemKind, string> = {
  directive: 'directives',
  tool: 'tools',
  knowledge: 'knowledge',
};

/**
 * Extensions tried for each kind, first match wins. RYE leaves the order undefined (an unordered
 * set); Dirigent fixes one and reports the other files found for the same item id.
 */
export const KIND_EXTENSIONS: Record<ItemKind, readonly string[]> = {
  directive: ['.md', '.yaml', '.yml'],
  tool: ['.py', '.yaml', '.yml', '.ts', '.mjs', '.js', '.cjs', '.json', '.sh', '.toml', '.md'],
  knowledge: ['.md', '.yaml', '.yml'],
};

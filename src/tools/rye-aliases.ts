/**
 * RYE's names for the native built-ins (`rye/file-system/*`, `rye/web/webfetch`): they resolve to
 * the native tools (see {@link RYE_ALIAS_TOOLS}) only while no space holds a file of that id, so
 * RYE's own Python file, put in a space, still wins, as any higher item shadows a lower one.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { KIND_DIRS, KIND_EXTENSIONS } from '../items/item-kind.js';
import type { ItemResolver } from '../items/item-resolver.js';
import { BuiltinDispatcher, type BuiltinDispatcherOptions } from './builtin-dispatcher.js';
import { RYE_ALIAS_TOOLS } from './rye-alias-tools.js';
import type { ToolDescription } from './tool-dispatcher.js';

/** The RYE names in force for a resolver's spaces. */
export class RyeAliases {
  readonly dispatcher: BuiltinDispatcher;
  /** Whether a space holds each id, as of the resolver's generation it was looked up at. */
  private readonly held = new Map<string, { generation: number; held: boolean }>();

  constructor(
    private readonly items: ItemResolver,
    options: BuiltinDispatcherOptions = {},
  ) {
    this.dispatcher = new BuiltinDispatcher(RYE_ALIAS_TOOLS, { ...options, compileEagerly: false });
  }

  /** The description of the alias `itemId`, when it is one and no space holds that tool. */
  active(itemId: string): ToolDescription | undefined {
    const alias = this.dispatcher.describe(itemId);
    return alias === undefined || this.spaceHolds(itemId) ? undefined : alias;
  }

  /**
   * Whether some space has a tool file of `itemId`. Synchronous (a worker asks before it builds
   * a chain) and cached until a file in a space changes (the resolver's watchers count changes).
   */
  private spaceHolds(itemId: string): boolean {
    this.items.watchSpaces();
    const generation = this.items.generation;
    const known = this.held.get(itemId);
    if (known?.generation === generation) return known.held;
    const held = this.items.spaces.some((space) =>
      KIND_EXTENSIONS.tool.some((ext) =>
        existsSync(join(space.root, KIND_DIRS.tool, ...itemId.split('/')) + ext),
      ),
    );
    this.held.set(itemId, { generation, held });
    return held;
  }
}

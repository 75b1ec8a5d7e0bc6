/**
 * A space's `tools/enabled.json` (seed 002): the tools registered by `dirigent tool create`, with
 * the file and content hash each was registered with. An entry with `"enabled": false` turns the
 * tool off without deleting it. Tools not listed run as usual: the registry records, it does not
 * gate RYE's own files.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/** One registered tool. */
export interface RegisteredTool {
  /** The file, relative to the space's `tools/` folder. */
  file: string;
  sha256: string;
  registered_at: string;
  enabled: boolean;
}

/** The content of `enabled.json`. */
export interface ToolRegistryFile {
  tools: Record<string, RegisteredTool>;
}

/** The registry file of a space whose `.ai` folder is `spaceRoot`. */
export function registryFile(spaceRoot: string): string {
  return join(spaceRoot, 'tools', 'enabled.json');
}

/** Reads a space's registry; an absent file is an empty registry. */
export async function readToolRegistry(spaceRoot: string): Promise<ToolRegistryFile> {
  const file = registryFile(spaceRoot);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return { tools: {} };
  }
  try {
    const data = JSON.parse(text) as Partial<ToolRegistryFile>;
    if (typeof data.tools === 'object' && data.tools !== null) return { tools: data.tools };
  } catch {
    // reported below
  }
  throw DirigentError.fatal(ErrorCode.INVALID_TOOL, `${file} is not a tool registry.`, {
    location: { file, line: 1, column: 1 },
    hint: 'It holds {"tools": {"<item_id>": {"file", "sha256", "registered_at", "enabled"}}}; fix or delete it.',
  });
}

/** Adds or replaces one entry, writing the file atomically. */
export async function registerTool(
  spaceRoot: string,
  itemId: string,
  entry: RegisteredTool,
): Promise<void> {
  const registry = await readToolRegistry(spaceRoot);
  registry.tools[itemId] = entry;
  const file = registryFile(spaceRoot);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(registry, null, 2)}\n`);
  await rename(tmp, file);
}

/** Throws `TOOL_DISABLED` when the space's registry turns `itemId` off. */
export async function checkToolEnabled(spaceRoot: string, itemId: string): Promise<void> {
  const entry = (await readToolRegistry(spaceRoot)).tools[itemId];
  if (entry?.enabled === false) {
    throw DirigentError.fatal(
      ErrorCode.TOOL_DISABLED,
      `Tool "${itemId}" is disabled in ${registryFile(spaceRoot)}.`,
      {
        hint: `Set "enabled": true for "${itemId}" there to run it again.`,
        details: { itemId },
      },
    );
  }
}

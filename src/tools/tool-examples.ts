/**
 * Which worked examples a tool has (`dirigent tool test`): a built-in's own, RYE's names' (when
 * no space holds RYE's file), and the `examples` a JS/TS tool of a space declares (seed 003).
 */
import { readdir } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { DirigentError, ErrorCode } from '../errors/index.js';
import type { JsToolMetadata } from '../items/js-tool-metadata-type.js';
import { KIND_DIRS } from '../items/item-kind.js';
import type { ItemResolver } from '../items/item-resolver.js';
import { BUILTIN_TOOLS } from './builtin/index.js';
import type { ItemDispatcher } from './item-dispatcher.js';
import { RYE_ALIAS_TOOLS } from './rye-alias-tools.js';
import type { ToolExample } from './tool-example.js';
import { ignoreCode, ignoreMissing } from '../errors/ignore-expected.js';

/** A tool and its examples. */
export interface ToolExamples {
  itemId: string;
  /** `builtin`, RYE's name of one, or the space of the tool's file. */
  from: string;
  examples: readonly ToolExample[];
}

const JS_EXTENSIONS = new Set(['.ts', '.mjs', '.js', '.cjs']);

/**
 * The examples of `itemId` as `dispatcher` runs it. Throws `UNKNOWN_TOOL` (and the chain's
 * errors) for a tool that does not resolve, and `NO_EXAMPLES` for one without examples.
 */
export async function toolExamples(
  dispatcher: ItemDispatcher,
  itemId: string,
  projectDir: string,
): Promise<ToolExamples> {
  const found = await examplesOf(dispatcher, itemId, projectDir);
  if (found.examples.length > 0) return found;
  throw DirigentError.fatal(ErrorCode.NO_EXAMPLES, `tool "${itemId}" has no examples to run`, {
    hint: 'Declare examples ([{ input, output, description }]) in a JS/TS tool, or test another tool.',
    details: { itemId },
  });
}

/**
 * Every tool with examples: the built-ins, RYE's names in force, and the JS/TS tools of the
 * spaces that declare examples (the one that wins where a higher space shadows a lower), in
 * item id order within each group.
 */
export async function allToolExamples(
  dispatcher: ItemDispatcher,
  items: ItemResolver,
  projectDir: string,
): Promise<ToolExamples[]> {
  const ids = new Set<string>([...BUILTIN_TOOLS, ...RYE_ALIAS_TOOLS].map((t) => t.itemId));
  const out: ToolExamples[] = [];
  for (const id of ids) {
    if (dispatcher.isBuiltin(id)) out.push(await examplesOf(dispatcher, id, projectDir));
  }
  const scripts = new Set<string>();
  for (const space of items.spaces) {
    const dir = join(space.root, KIND_DIRS.tool);
    const files = (await readdir(dir, { recursive: true }).catch(ignoreMissing)) ?? [];
    for (const file of files) {
      if (!JS_EXTENSIONS.has(extname(file))) continue;
      const id = relative(dir, join(dir, file))
        .slice(0, -extname(file).length)
        .split(sep)
        .join('/');
      if (!ids.has(id)) scripts.add(id);
    }
  }
  for (const id of [...scripts].sort()) {
    const resolved = await items.resolve('tool', id).catch(ignoreCode(ErrorCode.UNKNOWN_TOOL));
    if (resolved === undefined || !JS_EXTENSIONS.has(extname(resolved.file))) continue;
    const found = await examplesOf(dispatcher, id, projectDir).catch(() => {
      /* A module that is no tool (a helper the tools import) has no examples; a broken tool
         says what is wrong when tested by name (`dirigent tool test <id>`). */
      return undefined;
    });
    if (found !== undefined && found.examples.length > 0) out.push(found);
  }
  return out.filter((t) => t.examples.length > 0);
}

async function examplesOf(
  dispatcher: ItemDispatcher,
  itemId: string,
  projectDir: string,
): Promise<ToolExamples> {
  if (dispatcher.isBuiltin(itemId)) {
    const native = BUILTIN_TOOLS.find((t) => t.itemId === itemId);
    const tool = native ?? RYE_ALIAS_TOOLS.find((t) => t.itemId === itemId)!;
    return {
      itemId,
      from: native ? 'builtin' : "RYE's name of a built-in",
      examples: tool.examples ?? [],
    };
  }
  const [link] = await dispatcher.chainOf(itemId, projectDir);
  const meta =
    link!.item.format === 'javascript' ? (link!.item.source as JsToolMetadata) : undefined;
  const examples = (meta?.examples ?? []).map((e, i) => ({
    description: e.description ?? `example ${i + 1}`,
    input: e.input,
    ...(e.output !== undefined && { output: e.output }),
  }));
  return { itemId, from: link!.space, examples };
}

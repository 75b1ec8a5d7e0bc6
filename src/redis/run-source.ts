/**
 * A directive between the process that submits a run and the worker that runs it (see
 * {@link RunSource}): the submitter describes what it resolved, the worker finds the same in the
 * project it serves, or says what differs.
 */
import { extname } from 'node:path';
import type { ExecuteAction, ProcessNode } from '../directive/ast.js';
import { contentHash } from '../directive/parse-directive.js';
import type { DirectiveLoader, LoadedDirective } from '../engine/directive-loader.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { itemHash } from '../items/item-hash.js';
import type { ItemResolver } from '../items/item-resolver.js';
import { BUILTIN_TOOLS } from '../tools/builtin/index.js';
import type { RunSource } from './run-job.js';
import { DirectiveCopies } from './run-worker/directive-copies.js';
import { ignoreCode } from '../errors/ignore-expected.js';

const BUILTINS = new Set(BUILTIN_TOOLS.map((t) => t.itemId));

/**
 * The source of a run of `loaded`, with the hashes of the tools it names literally as `items`
 * resolves them (tools no space holds are left out: the worker reports them).
 */
export async function runSourceOf(
  loaded: LoadedDirective,
  items: ItemResolver,
): Promise<RunSource> {
  const tools: Record<string, string> = {};
  for (const id of literalTools(loaded.compiled.directive.process)) {
    // A built-in tool is in no space: only a tool of the spaces has a file to hash.
    const found = await items.resolve('tool', id).catch(ignoreCode(ErrorCode.UNKNOWN_TOOL));
    if (found !== undefined) tools[id] = await itemHash(found.file);
  }
  return {
    directive: loaded.itemId,
    text: loaded.text,
    hash: contentHash(loaded.text),
    ext: extname(loaded.file) || '.md',
    ...(Object.keys(tools).length > 0 && { tools }),
  };
}

/** The item ids of the tools a process names without templates, built-ins left out. */
function literalTools(nodes: readonly ProcessNode[], into = new Set<string>()): Set<string> {
  const add = (a: ExecuteAction) => {
    if (a.itemType === 'tool' && !a.itemId.includes('{') && !BUILTINS.has(a.itemId))
      into.add(a.itemId);
  };
  for (const node of nodes) {
    if (node.kind === 'parallel') {
      for (const branch of node.branches) literalTools(branch.nodes, into);
      continue;
    }
    const action = node.action;
    if (action.type === 'execute') add(action);
    else if (action.type === 'foreach') add(action.execute);
  }
  return into;
}

/**
 * The directive of a start job, as the project `loader` serves has it: its own copy when it has
 * one (which must be the same text: `DIRECTIVE_MISMATCH` otherwise), else the job's text as if it
 * were there. Either way the job's text is verified under this project's signing policy.
 */
export async function loadRunDirective(
  loader: DirectiveLoader,
  source: RunSource,
): Promise<LoadedDirective> {
  let copies = copiesByLoader.get(loader);
  if (copies === undefined) copiesByLoader.set(loader, (copies = new DirectiveCopies(loader)));
  let own = await copies.copyOf(source.directive);
  // A text other than the job's may be a change of the last moments: looked at again, as it is now.
  if (own !== undefined && own.hash !== source.hash)
    own = await copies.copyOf(source.directive, true);
  if (own === undefined)
    return copies.verifiedText(
      loader.fileOf(source.directive, source.ext),
      source.text,
      source.hash,
    );
  if (own.hash !== source.hash)
    throw DirigentError.fatal(
      ErrorCode.DIRECTIVE_MISMATCH,
      `This worker's copy of directive "${source.directive}" (${own.file}) differs from the one the run was started with (content ${own.hash.slice(0, 12)}… here, ${source.hash.slice(0, 12)}… there); it runs nothing else.`,
      {
        hint: 'Deploy the same project to every worker and to whatever starts runs (the CLI, the API), then start the run again.',
        details: {
          directive: source.directive,
          file: own.file,
          expected: source.hash,
          found: own.hash,
        },
      },
    );
  return own.loaded;
}

/** Each project loader's copies of directives (see `directive-copies.ts`). */
const copiesByLoader = new WeakMap<DirectiveLoader, DirectiveCopies>();

/**
 * Refuses a tool call whose tool this worker has in another version than the run's submitter
 * resolved (`TOOL_MISMATCH`); a call without a hash (a tool named by a template, or one the
 * submitter did not have) is not checked.
 */
export async function checkToolHash(
  itemId: string,
  file: string,
  expected: string | undefined,
): Promise<void> {
  if (expected === undefined) return;
  const found = await itemHash(file);
  if (found === expected) return;
  throw DirigentError.fatal(
    ErrorCode.TOOL_MISMATCH,
    `This worker's copy of tool "${itemId}" (${file}) differs from the one the run was started with (content ${found.slice(0, 12)}… here, ${expected.slice(0, 12)}… there); it runs nothing else.`,
    {
      hint: 'Deploy the same project to every worker and to whatever starts runs, then run again.',
      details: { itemId, file, expected, found },
    },
  );
}

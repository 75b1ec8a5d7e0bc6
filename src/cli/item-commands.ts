/**
 * `dirigent search`, `dirigent load` and `dirigent execute`: the item interface at the terminal,
 * on the same operations as the MCP server and the API (`Dirigent.items`). Output is for people,
 * or with `--json` the operation's answer as JSON.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SignatureState } from '../items/item-catalog.js';
import type { Executed } from '../operations/item-operations.js';
import type { SearchHit, SearchPage } from '../search/search-page.js';
import type { SearchSort } from '../search/search-request.js';
import { parseItemKind, parseSpaceName } from './item-arguments.js';
import { parseJsonOption, parsePayload } from './parse-inputs.js';
import { printRecord, withDirigent, withProjectItems, type CommonOptions } from './run-command.js';
import { INVALID_CALL } from './tool-command.js';

const out = (line: string) => process.stdout.write(`${line}\n`);

/** Options of `dirigent search`. */
export interface SearchOptions extends CommonOptions {
  kind: string[];
  space: string[];
  category?: string;
  tag: string[];
  version?: string;
  from?: string;
  to?: string;
  signature: string[];
  /** False with `--no-shadowed`. */
  shadowed: boolean;
  sort?: string;
  limit?: string;
  offset?: string;
}

/**
 * `dirigent search [query…]`: ranked search over the items of every space (see `ItemIndex` for
 * the query language), one line per item, or the page as JSON. Exit 0 (also when nothing
 * matches), 2 for a malformed query or option.
 */
export function searchCommand(words: string[], opts: SearchOptions): Promise<number> {
  return withProjectItems(opts, async (dirigent) => {
    const page = await dirigent.items.search({
      query: words.join(' '),
      ...(opts.kind.length > 0 && { kinds: opts.kind.map(parseItemKind) }),
      ...(opts.space.length > 0 && {
        spaces: opts.space.map((s) => parseSpaceName(s, ['project', 'user', 'system'])),
      }),
      ...(opts.category !== undefined && { category: opts.category }),
      ...(opts.tag.length > 0 && { tags: opts.tag }),
      ...(opts.version !== undefined && { version: opts.version }),
      ...(opts.from !== undefined && { dateFrom: opts.from }),
      ...(opts.to !== undefined && { dateTo: opts.to }),
      ...(opts.signature.length > 0 && { signature: opts.signature as SignatureState[] }),
      includeShadowed: opts.shadowed,
      ...(opts.sort !== undefined && { sort: opts.sort as SearchSort }),
      ...(opts.limit !== undefined && { limit: Number(opts.limit) }),
      ...(opts.offset !== undefined && { offset: Number(opts.offset) }),
    });
    if (opts.json) out(JSON.stringify(page));
    else printPage(page);
    return 0;
  });
}

function printPage(page: SearchPage): void {
  if (page.total === 0) {
    out(page.query === '' ? 'No items.' : `Nothing matches "${page.query}".`);
    return;
  }
  const width = Math.max(...page.results.map((h) => h.itemId.length));
  for (const hit of page.results) out(hitLine(hit, width));
  const last = page.offset + page.results.length;
  const more = last < page.total ? ` (next page: --offset ${last})` : '';
  out(`${page.offset + 1}–${last} of ${page.total}${more}`);
}

function hitLine(hit: SearchHit, width: number): string {
  const marks = [
    hit.signature,
    ...(hit.shadowedBy !== undefined ? [`shadowed by ${hit.shadowedBy}`] : []),
  ];
  const about = hit.title ?? hit.description ?? '';
  return (
    `${hit.kind.padEnd(9)} ${hit.space.padEnd(7)} ${hit.itemId.padEnd(width)}  ` +
    `${hit.version !== undefined ? `v${hit.version} ` : ''}${about}${about ? ' ' : ''}[${marks.join(', ')}]`
  );
}

/** Options of `dirigent load`. */
export interface LoadOptions extends CommonOptions {
  from?: string;
  to?: string;
  force?: boolean;
}

/**
 * `dirigent load <item_type> <item_id> [--from space] [--to project|user]`: prints the item
 * (verified first), or copies it. Exit 0, or 2 when it cannot be loaded.
 */
export function loadCommand(kind: string, itemId: string, opts: LoadOptions): Promise<number> {
  return withProjectItems(opts, async (dirigent) => {
    const loaded = await dirigent.items.load({
      kind: parseItemKind(kind),
      itemId,
      ...(opts.from !== undefined && {
        source: parseSpaceName(opts.from, ['project', 'user', 'system'], '--from'),
      }),
      ...(opts.to !== undefined && {
        destination: parseSpaceName(opts.to, ['project', 'user'], '--to'),
      }),
      ...(opts.force === true && { overwrite: true }),
    });
    if (opts.json) out(JSON.stringify(loaded));
    else if (loaded.copiedTo !== undefined)
      out(
        loaded.copiedTo.unchanged
          ? `${loaded.copiedTo.file} already holds this ${kind} (${loaded.signature.status}).`
          : `Copied ${kind} ${itemId} from the ${loaded.space} space to ${loaded.copiedTo.file} (${loaded.signature.status}).`,
      );
    else process.stdout.write(loaded.content);
    for (const w of loaded.warnings) process.stderr.write(`warning: ${w}\n`);
    return 0;
  });
}

/** Options of `dirigent execute`. */
export interface ExecuteOptions extends CommonOptions {
  params?: string;
  dryRun?: boolean;
  runId?: string;
  /** `--payload` (formerly `--answer`): the answer to the waiting run `runId`. */
  payload?: string;
  signal?: string;
  /** `--detach` (formerly `--async`): on Redis, print the run as it starts instead of waiting. */
  detach?: boolean;
}

/**
 * `dirigent execute <item_type> <item_id> [--params json] [--dry-run]`: runs a tool, runs a
 * directive (`--run-id` and `--payload` answer a waiting run), or prints a knowledge entry. Exit
 * status: a directive's as `dirigent run` (0 completed, 1 failed, 3 waiting), 0 for a tool that
 * succeeded and 1 for one that failed, 2 when the call is invalid. `--detach` means what it means
 * for `run`: on Redis the run is printed as it starts; embedded, where this process is the one
 * that runs it, it is waited for.
 */
export function executeCommand(
  kind: string,
  itemId: string,
  opts: ExecuteOptions,
): Promise<number> {
  return withDirigent(opts, async (dirigent) => {
    const parameters = parseJsonOption(opts.params, '--params') ?? {};
    if (opts.payload !== undefined && opts.runId === undefined)
      throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, '--payload needs --run-id.', {
        hint: 'Name the waiting run: --run-id <id> --payload <json>.',
      });
    let done: Executed;
    try {
      done = await dirigent.items.execute({
        kind: parseItemKind(kind),
        itemId,
        parameters,
        dryRun: opts.dryRun === true,
        wait: !(opts.detach === true && dirigent.mode === 'redis'),
        trigger: 'cli',
        ...(opts.runId !== undefined && {
          resume: {
            runId: opts.runId,
            answer: parsePayload(opts.payload),
            ...(opts.signal !== undefined && { signal: opts.signal }),
          },
        }),
      });
    } catch (err) {
      // A tool that ran and failed is the tool's outcome (1), not a wrong call (2).
      const e = DirigentError.from(err);
      if (kind !== 'tool' || opts.dryRun === true || INVALID_CALL.includes(e.code)) throw e;
      process.stderr.write(`${e.describe()}\n`);
      if (opts.json) out(JSON.stringify({ ok: false, error: e.toJSON() }));
      return 1;
    }
    return printExecuted(done, opts);
  });
}

function printExecuted(done: Executed, opts: { json?: boolean }): number {
  if (done.kind === 'directive' && !done.dryRun) return printRecord(done.run, opts);
  if (opts.json) {
    out(JSON.stringify(done));
    return 0;
  }
  switch (done.kind) {
    case 'knowledge':
      process.stdout.write(done.content.endsWith('\n') ? done.content : `${done.content}\n`);
      break;
    case 'tool':
      out(
        JSON.stringify(
          done.dryRun ? { params: done.params, chain: done.chain } : done.result,
          null,
          2,
        ),
      );
      break;
    case 'directive':
      out(`Valid: directive ${done.itemId} would run with ${JSON.stringify(done.inputs)}.`);
      break;
  }
  return 0;
}

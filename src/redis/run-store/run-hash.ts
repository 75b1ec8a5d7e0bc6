/**
 * A run as the fields of its Redis hash, and back. The run store's keys (see `redis-run-store.ts`).
 *
 * Layout, under a prefix (default `dirigent`):
 *
 * - `<prefix>:run:<id>`: a hash per run with the fields `record` (the run record, its `steps`
 *   list left empty), `entry:<i>` per entry of that list, `snapshot`, `counters`, `children` and
 *   `meta` (source, projectDir, depth, parentRunId: what never changes), one field `step:<name>`
 *   per step record (all JSON), `version` (incremented by every save), the plain `status`,
 *   `directive` and `etag` (the identity of the last write) that the scripts read, `tags` (a line
 *   `name=value` per tag, when the run has any), `redrive` (a failed or cancelled run's redrive
 *   point, see `engine/redrive.ts`), `textkey` (the
 *   key of its directive's text), and, for runs written by workers, `epoch` (how many times the
 *   run was claimed) and `owner` (the lease name of the worker that holds it, cleared when it lets
 *   the run go): see `run-claims.ts`.
 * - `<prefix>:runs`, `<prefix>:runs:status:<status>`, `<prefix>:runs:directive:<directive>`: sorted
 *   sets of run ids scored by `startedAt`, moved atomically with every save.
 * - `<prefix>:directive-text:<content hash>`: a directive's text, kept once for all its runs (their
 *   `meta` names the hash, not the text) while one of them is stored: `…:runs` is the set of their
 *   ids, and `<prefix>:runs:text-of` (run id → content hash) finds it from a run whose hash has
 *   expired.
 * - `<prefix>:runs:tag:<name>=<value>`: a sorted set per tag, as the indexes above, and
 *   `<prefix>:runs:tags-of` (run id → its `tags` field), for when its hash has expired.
 * - `<prefix>:runs:expiring` (sorted set, score = expiry time in epoch ms) and
 *   `<prefix>:runs:directive-of` (hash run id → directive): what index cleanup needs once a run's
 *   hash has expired.
 * - `<prefix>:runs:jobs-due` (sorted set): the runs kept less than a day, whose finished jobs are
 *   removed by a prune once they expire (see `expired-run-jobs.ts`).
 */
import type { StepRecord } from '../../compiler/run-context.js';
import { contentHash } from '../../directive/parse-directive.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import type { RunRecord } from '../../engine/run-record.js';
import type { StoredRun } from '../../engine/run-store.js';
import type { RunTrace } from '../../telemetry/run-trace.js';
import { TEXT_FIELD } from './run-store-lua.js';

/** A stored run with the version its hash had when it was read. */
export type VersionedRun = StoredRun & { version: number };

/** The prefix of the fields holding step records, by step name. */
export const STEP = 'step:';
/** The prefix of the fields holding the entries of the record's `steps` list, by index. */
export const ENTRY = 'entry:';
/** The field holding a failed or cancelled run's redrive point (`StoredRun.redrivePoint`). */
const REDRIVE = 'redrive';

/** What a store last wrote (or read) for a run: the hash's etag and JSON fields. */
export interface Written {
  etag: string;
  fields: Map<string, string>;
  /** The run's unchanging fields as last written, so that the next save need not serialise them. */
  meta?: RunMeta;
}

/** The `meta` field: what a run keeps beside its record, snapshot and steps, and never changes. */
export interface RunMeta {
  source: StoredRun['source'];
  projectDir: string;
  depth: number;
  parentRunId: string | null;
  trace?: RunTrace;
  tools?: Record<string, string>;
}

/** The `meta` field as stored: the source names its text's hash; older runs hold the text. */
interface StoredMeta extends Omit<RunMeta, 'source'> {
  source: { file: string; hash?: string; text?: string };
}

/** The content hash of a run's directive text. */
export function sourceHash(source: StoredRun['source']): string {
  return source.hash ?? contentHash(source.text);
}

/** The key at which a store with `prefix` keeps the directive text whose content hash is `hash`. */
export function textKey(prefix: string, hash: string): string {
  return `${prefix}:directive-text:${hash}`;
}

/** The `meta` field's JSON: the text is kept at its text key, so meta names its hash. */
function metaJson(meta: RunMeta): string {
  const { file } = meta.source;
  return JSON.stringify({ ...meta, source: { file, hash: sourceHash(meta.source) } });
}

/** The unchanging fields of a run. */
export function metaOf(run: StoredRun): RunMeta {
  return {
    source: run.source,
    projectDir: run.projectDir,
    depth: run.depth,
    parentRunId: run.parentRunId,
    ...(run.trace && { trace: run.trace }),
    ...(run.tools && { tools: run.tools }),
  };
}

/** Whether two metas are the same write (the source compared by identity first). */
export function sameMeta(a: RunMeta | undefined, b: RunMeta): boolean {
  return (
    a !== undefined &&
    a.source.file === b.source.file &&
    a.source.text === b.source.text &&
    a.projectDir === b.projectDir &&
    a.depth === b.depth &&
    a.parentRunId === b.parentRunId &&
    a.trace?.spanId === b.trace?.spanId
  );
}

/**
 * The hash fields of a run, as JSON; the `meta` field is taken from `previous` (the last write,
 * whose meta was the same) rather than serialised again.
 */
export function fieldsOf(run: StoredRun, meta: RunMeta, previous?: Written): Map<string, string> {
  // What changes as the run goes (counters at every step, children now and then) is kept apart
  // from what never does (the source above), so a save sends only the small fields.
  // The record's `steps` list only grows, one entry at a time: each entry is a field of its own,
  // serialised once, so a save sends the new entries, not the whole list again.
  const entries = run.record.steps;
  const fields = new Map<string, string>([
    ['record', JSON.stringify({ ...run.record, steps: [] })],
    ['snapshot', JSON.stringify(run.snapshot) ?? 'null'],
    ['meta', previous?.fields.get('meta') ?? metaJson(meta)],
    ['counters', JSON.stringify(run.counters)],
    ['children', JSON.stringify(run.children)],
  ]);
  for (const [i, entry] of entries.entries()) {
    const field = ENTRY + i;
    fields.set(field, previous?.fields.get(field) ?? JSON.stringify(entry));
  }
  for (const [name, step] of Object.entries(run.steps))
    fields.set(STEP + name, JSON.stringify(step));
  const tags = tagsField(run.record.tags);
  if (tags !== undefined) fields.set('tags', tags);
  if (run.redrivePoint !== undefined) fields.set(REDRIVE, JSON.stringify(run.redrivePoint));
  return fields;
}

/**
 * The `tags` field: a line `name=value` per tag, which the save script indexes (values hold no
 * line break, see `engine/run-tags.ts`).
 */
function tagsField(tags: Record<string, string> | undefined): string | undefined {
  if (tags === undefined) return undefined;
  const lines = Object.entries(tags).map(([name, value]) => `${name}=${value}`);
  return lines.length === 0 ? undefined : lines.join('\n');
}

function sourceMissing(runId: string, hash: string | undefined): DirigentError {
  return DirigentError.fatal(
    ErrorCode.RUN_SOURCE_MISSING,
    `Run ${runId} is stored, but the text of its directive (content ${hash?.slice(0, 12) ?? '?'}…) is not: it cannot be resumed or shown.`,
    {
      hint: 'The store keeps a text while a run may need it; a key deleted by hand loses it. Start the run again.',
      details: { runId, hash },
    },
  );
}

/** The run record in a run's hash: its `record` field with the `steps` list from its entries. */
export function recordOf(hash: Record<string, string>): RunRecord {
  const steps: RunRecord['steps'] = [];
  for (const [field, json] of Object.entries(hash))
    if (field.startsWith(ENTRY)) steps[Number(field.slice(ENTRY.length))] = JSON.parse(json);
  const record = JSON.parse(hash.record!) as RunRecord; // its `steps` is kept empty, in place
  record.steps = steps;
  return record;
}

/** The fields of `next` that differ from `before`, and the step fields `next` no longer has. */
export function changes(
  before: Map<string, string>,
  next: Map<string, string>,
): { set: Map<string, string>; removed: string[] } {
  const set = new Map<string, string>();
  for (const [field, json] of next) if (before.get(field) !== json) set.set(field, json);
  const removed = [...before.keys()].filter((field) => !next.has(field));
  return { set, removed };
}

/** A run read from its hash: the run, the JSON fields it was read from, and the last write's etag. */
export interface StoredHash {
  run: VersionedRun;
  fields: Map<string, string>;
  etag?: string;
}

/** A hash as a flat reply lists it (`field, value, …` from index `from`), as an object. */
export function hashOf(flat: readonly string[], from = 0): Record<string, string> {
  const hash: Record<string, string> = {};
  for (let i = from; i + 1 < flat.length; i += 2) hash[flat[i]!] = flat[i + 1]!;
  return hash;
}

/**
 * The run a hash holds (as `HGETALL` answers it), with the fields it was read with; undefined when
 * the hash holds no run (missing, or expired).
 */
export function storedRunOf(hash: Record<string, string>): StoredHash | undefined {
  const { record, snapshot, meta, counters, children, version } = hash;
  if (record === undefined || snapshot === undefined || meta === undefined) return undefined;
  const fields = new Map<string, string>([
    ['record', record],
    ['snapshot', snapshot],
    ['meta', meta],
    ['counters', counters ?? '{}'],
    ['children', children ?? '{}'],
  ]);
  if (hash.tags !== undefined) fields.set('tags', hash.tags);
  const point = hash[REDRIVE];
  if (point !== undefined) fields.set(REDRIVE, point);
  const steps: Record<string, StepRecord> = {};
  for (const [field, json] of Object.entries(hash)) {
    if (field.startsWith(ENTRY)) fields.set(field, json);
    if (!field.startsWith(STEP)) continue;
    fields.set(field, json);
    steps[field.slice(STEP.length)] = JSON.parse(json) as StepRecord;
  }
  const m = JSON.parse(meta) as StoredMeta;
  const runRecord = recordOf(hash);
  const text = m.source.text ?? hash[TEXT_FIELD];
  if (text === undefined) throw sourceMissing(runRecord.runId, m.source.hash);
  const run: VersionedRun = {
    record: runRecord,
    snapshot: JSON.parse(snapshot) as unknown,
    source: { file: m.source.file, text, ...(m.source.hash && { hash: m.source.hash }) },
    projectDir: m.projectDir,
    depth: m.depth,
    parentRunId: m.parentRunId,
    children: JSON.parse(children ?? '{}') as StoredRun['children'],
    steps,
    counters: JSON.parse(counters ?? '{}') as StoredRun['counters'],
    ...(m.trace && { trace: m.trace }),
    ...(m.tools && { tools: m.tools }),
    ...(point !== undefined && { redrivePoint: JSON.parse(point) as unknown }),
    version: Number(version ?? 0),
  };
  return { run, fields, ...(hash.etag !== undefined && { etag: hash.etag }) };
}

/**
 * A run as the fields of its Redis hash and the lines of its body, and back. The run store's keys
 * (see `redis-run-store.ts`).
 *
 * Layout, under a prefix (default `dirigent`):
 *
 * - `<prefix>:run:<id>`: a hash per run with what the scripts read and what a save adds one at a
 *   time: the plain `status` and `directive`, `version` (incremented by every save), `etag` (the
 *   identity of the last write), `texthash` (the content hash of its directive's text, kept at
 *   its text key), `feed` (its feed's last event id, see `pending-events.ts`), `tags` (a line
 *   `name=value` per tag, when the run has any), `redrive` (a failed or cancelled run's redrive
 *   point, see `engine/redrive.ts`), one field `s:<name>` per step record and `entry:<i>` per
 *   entry of the record's `steps` list, and, for runs written by workers, `epoch` (how many times
 *   the run was claimed) and `owner` (the lease name of the worker that holds it, cleared when it
 *   lets the run go): see `run-claims.ts`. Its values are small while a run waits at its first
 *   step, so Redis keeps it as a listpack (see `compact-run-parts.ts`).
 * - `<prefix>:run:<id>:body`: a string, the run's larger parts as lines of JSON, in the order of
 *   {@link BODY_LINES}: `meta` (source file, project folder, depth, parent, trace, tool hashes:
 *   what never changes), `record` (the run record, less its steps and what the hash holds),
 *   `snapshot` (the machine's), `counters` and `children`, each compact (see
 *   `compact-run-parts.ts`). JSON holds no line break, so a save replaces the lines that changed.
 * - `<prefix>:runs:status:<status>`, `<prefix>:runs:directive:<directive>`: sorted sets of run ids
 *   scored by `startedAt`, moved atomically with every save. Every run is in the index of its
 *   status: all runs are those indexes merged (see `list-stored-runs.ts`).
 * - `<prefix>:directive-text:<content hash>`: a directive's text, kept once for all its runs (their
 *   `texthash` names it) while one of them is stored: `…:count` counts them.
 * - `<prefix>:runs:tag:<name>=<value>`: a sorted set per tag, as the indexes above.
 * - `<prefix>:runs:expiring` (sorted set, score = expiry time in epoch ms), and, for each run in it,
 *   `<prefix>:runs:directive-of` (run id → directive), `<prefix>:runs:text-of` (run id → content
 *   hash) and `<prefix>:runs:tags-of` (run id → its `tags` field): what index cleanup needs once a
 *   run's hash has expired. A run that does not expire (one under way or waiting) is in none of
 *   these: its hash says the same.
 * - `<prefix>:runs:jobs-due` (sorted set): the runs kept less than a day, whose finished jobs are
 *   removed by a prune once they expire (see `expired-run-jobs.ts`).
 *
 * Runs stored before the body existed keep `record`, `snapshot`, `meta`, `counters`, `children`
 * and `textkey` (the text's key) in the hash, and step records as `step:<name>`, all whole JSON;
 * they are read as they are, and written in this layout by their next save. A step record JSON
 * cannot keep compact (see `compact-run-parts.ts`) is still written whole, as `step:<name>`. Stores
 * before also kept `<prefix>:runs`, an index of all runs (a save takes its run out of it), and the
 * ids of a text's runs in `…:runs` beside its text (counted as well as `…:count`, until they go).
 */
import type { StepRecord } from '../../compiler/run-context.js';
import { contentHash } from '../../directive/parse-directive.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import type { RunRecord, StepEntry } from '../../engine/run-record.js';
import type { StoredRun } from '../../engine/run-store.js';
import {
  compactCounters,
  compactMeta,
  compactRecord,
  compactSnapshot,
  compactStep,
  fullCounters,
  fullMeta,
  fullRecord,
  fullSnapshot,
  fullStep,
  type RunMeta,
} from './compact-run-parts.js';
import { BODY_FIELD, ID_FIELD, TEXT_FIELD } from './run-store-lua.js';

export type { RunMeta } from './compact-run-parts.js';

/** A stored run with the version its hash had when it was read. */
export type VersionedRun = StoredRun & { version: number };

/** The prefix of the fields holding step records in compact form, by step name. */
export const STEP = 's:';
/** The prefix of the fields holding step records whole, by step name (and as stores wrote before). */
export const WHOLE_STEP = 'step:';
/** The prefix of the fields holding the entries of the record's `steps` list, by index. */
export const ENTRY = 'entry:';
/** The field holding a failed or cancelled run's redrive point (`StoredRun.redrivePoint`). */
const REDRIVE = 'redrive';
/** The field naming the content hash of the run's directive text. */
export const TEXT_HASH = 'texthash';

/** The lines of a run's body, in order: each is also the name under which a save compares it. */
export const BODY_LINES = ['meta', 'record', 'snapshot', 'counters', 'children'] as const;

/** What a store last wrote (or read) for a run: the hash's etag, its fields and its body's lines. */
export interface Written {
  etag: string;
  /** The hash's fields and the body's lines (by their names in {@link BODY_LINES}), as JSON. */
  fields: Map<string, string>;
  /** The run's unchanging fields as last written, so that the next save need not serialise them. */
  meta?: RunMeta;
}

/**
 * The `meta` field of a run stored before the body: the source names its text's hash (older runs
 * hold the text).
 */
interface WholeMeta extends Omit<RunMeta, 'source'> {
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

/** The field and JSON of a step record: compact when it can be, else whole. */
export function stepField(name: string, record: StepRecord): [string, string] {
  const compact = compactStep(record);
  return compact === undefined
    ? [WHOLE_STEP + name, JSON.stringify(record)]
    : [STEP + name, compact];
}

/** The field a step's record would be in, in the other form than `field`'s (to delete it). */
export function otherStepField(field: string): string {
  return field.startsWith(STEP)
    ? WHOLE_STEP + field.slice(STEP.length)
    : STEP + field.slice(WHOLE_STEP.length);
}

/**
 * The body's lines and the hash fields of a run, as JSON; the `meta` line is taken from
 * `previous` (the last write, whose meta was the same) rather than serialised again.
 */
export function fieldsOf(run: StoredRun, meta: RunMeta, previous?: Written): Map<string, string> {
  // What changes as the run goes (counters at every step, children now and then) is kept apart
  // from what never does (the source above), so a save sends only the lines that changed.
  // The record's `steps` list only grows, one entry at a time: each entry is a field of its own,
  // serialised once, so a save sends the new entries, not the whole list again.
  const entries = run.record.steps;
  const fields = new Map<string, string>([
    ['meta', previous?.fields.get('meta') ?? compactMeta(meta)],
    ['record', compactRecord(run.record)],
    ['snapshot', compactSnapshot(run.snapshot)],
    ['counters', compactCounters(run.counters)],
    ['children', JSON.stringify(run.children)],
  ]);
  for (const [i, entry] of entries.entries()) {
    const field = ENTRY + i;
    fields.set(field, previous?.fields.get(field) ?? JSON.stringify(entry));
  }
  for (const [name, step] of Object.entries(run.steps)) fields.set(...stepField(name, step));
  const tags = tagsField(run.record.tags);
  if (tags !== undefined) fields.set('tags', tags);
  if (run.redrivePoint !== undefined) fields.set(REDRIVE, compactSnapshot(run.redrivePoint));
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

/**
 * The JSON parts of a run as a hash (and its body, under `BODY_FIELD`) holds them, by their names
 * in {@link BODY_LINES}; undefined when no run is stored there. `layout`: `body` for a run
 * written with a body, `whole` for one stores wrote before, whose parts are fields of the hash.
 */
function partsOf(
  hash: Record<string, string | undefined>,
): { layout: 'body' | 'whole'; parts: Map<string, string> } | undefined {
  const body = hash[BODY_FIELD];
  // A body whose hash is gone (deleted by hand; both expire together) holds no run.
  if (body != null && hash.status != null) {
    const lines = body.split('\n');
    if (lines.length !== BODY_LINES.length)
      throw DirigentError.fatal(
        ErrorCode.INTERNAL,
        `A run's body holds ${lines.length} lines, not ${BODY_LINES.length}: it was not written by this version of Dirigent.`,
        { hint: 'A key of the deployment was written by something else; check the key prefix.' },
      );
    return { layout: 'body', parts: new Map(BODY_LINES.map((name, i) => [name, lines[i]!])) };
  }
  const { record, snapshot, meta, counters, children } = hash;
  if (record == null || snapshot == null || meta == null) return undefined;
  const parts = new Map([
    ['meta', meta],
    ['record', record],
    ['snapshot', snapshot],
    ['counters', counters ?? '{}'],
    ['children', children ?? '{}'],
  ]);
  return { layout: 'whole', parts };
}

/** Whether a hash (with its body under `BODY_FIELD`) holds a run: it is not missing or expired. */
export function holdsRun(hash: Record<string, string | undefined>): boolean {
  return (hash[BODY_FIELD] != null && hash.status != null) || hash.record != null;
}

/** The entries of the record's `steps` list, from their fields. */
function entriesOf(hash: Record<string, string | undefined>): StepEntry[] {
  const steps: StepEntry[] = [];
  for (const [field, json] of Object.entries(hash))
    if (field.startsWith(ENTRY) && json != null)
      steps[Number(field.slice(ENTRY.length))] = JSON.parse(json) as StepEntry;
  return steps;
}

/**
 * The run record in a run's hash (with its body under `BODY_FIELD`), its `steps` list from its
 * entries (none when the hash was read without them); undefined when no run is stored there.
 */
export function recordOf(hash: Record<string, string | undefined>): RunRecord | undefined {
  const read = partsOf(hash);
  if (read === undefined) return undefined;
  const json = read.parts.get('record')!;
  const steps = entriesOf(hash);
  if (read.layout === 'body') {
    const { status, directive } = hash;
    return fullRecord(json, {
      runId: hash[ID_FIELD]!,
      status: status!,
      directive: directive!,
      steps,
    });
  }
  const record = JSON.parse(json) as RunRecord; // its `steps` is kept empty, in place
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

/**
 * A run read from its hash: the run, the JSON it was read from (hash fields and body lines), and
 * the last write's etag; a run stored before the body has no etag here, so that its next save
 * writes it whole, in the body's layout.
 */
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
 * The run a hash holds (as the read scripts answer it: `HGETALL`, with the body and the text),
 * with the JSON it was read from; undefined when the hash holds no run (missing, or expired).
 */
export function storedRunOf(hash: Record<string, string>): StoredHash | undefined {
  const read = partsOf(hash);
  if (read === undefined) return undefined;
  const { layout, parts } = read;
  const fields = new Map(parts);
  if (hash.tags !== undefined) fields.set('tags', hash.tags);
  const point = hash[REDRIVE];
  if (point !== undefined) fields.set(REDRIVE, point);
  const steps: Record<string, StepRecord> = {};
  for (const [field, json] of Object.entries(hash)) {
    if (field.startsWith(ENTRY)) fields.set(field, json);
    const whole = field.startsWith(WHOLE_STEP);
    if (!whole && !field.startsWith(STEP)) continue;
    fields.set(field, json);
    const name = field.slice(whole ? WHOLE_STEP.length : STEP.length);
    // Both forms of one step only when a write of an older version meets one of this: the
    // compact form is this version's.
    if (whole && hash[STEP + name] !== undefined) continue;
    steps[name] = whole ? (JSON.parse(json) as StepRecord) : fullStep(json);
  }
  const metaJson = parts.get('meta')!;
  const m: WholeMeta = layout === 'body' ? fullMeta(metaJson) : (JSON.parse(metaJson) as WholeMeta);
  const runRecord = recordOf(hash)!;
  const hashOfText = hash[TEXT_HASH] ?? m.source.hash;
  const text = m.source.text ?? hash[TEXT_FIELD];
  if (text === undefined) throw sourceMissing(runRecord.runId, hashOfText);
  const children = parts.get('children')!;
  const counters = parts.get('counters')!;
  const run: VersionedRun = {
    record: runRecord,
    snapshot: fullSnapshot(parts.get('snapshot')!),
    source: { file: m.source.file, text, ...(hashOfText && { hash: hashOfText }) },
    projectDir: m.projectDir,
    depth: m.depth,
    parentRunId: m.parentRunId,
    children: JSON.parse(children) as StoredRun['children'],
    steps,
    counters:
      layout === 'body' ? fullCounters(counters) : (JSON.parse(counters) as StoredRun['counters']),
    ...(m.trace && { trace: m.trace }),
    ...(m.tools && { tools: m.tools }),
    ...(point !== undefined && { redrivePoint: fullSnapshot(point) }),
    version: Number(hash.version ?? 0),
  };
  const etag = layout === 'body' ? hash.etag : undefined;
  return { run, fields, ...(etag !== undefined && { etag }) };
}

/**
 * The compact JSON of a run's parts, as the Redis run store keeps them (see `run-hash.ts`): each
 * part without what the run's hash holds already, or what is at its default while a run goes, and
 * how it comes back whole.
 *
 * Why it matters: most runs that are stored for long wait (for a person, a signal, a time), and
 * what a waiting run holds is mostly these parts. Redis keeps a hash whose values are all at most
 * `hash-max-listpack-value` (64 bytes by default) as one listpack, a fraction of the memory of a
 * hashtable; so a step record under way fits in one such value (`{"startedAt":…,"seq":1}`), and
 * the larger parts go to the run's body, one string (see `run-hash.ts`).
 *
 * Every form here reads back to the same value it was written from: a part is compacted only when
 * each field left out was there, at its default, so putting the defaults back restores it. A part
 * that does not have that shape (a snapshot of another kind, a step record whose `result` JSON
 * cannot keep) is kept whole, as before. Key order may differ from the value written.
 */
import { STEP_UNDER_WAY, type StepRecord } from '../../compiler/run-context.js';
import type { RunCounters } from '../../engine/run-counters.js';
import type { RunRecord, RunStatus, StepEntry } from '../../engine/run-record.js';
import type { RunTrace } from '../../telemetry/run-trace.js';

/** A plain JSON object. */
type Json = Record<string, unknown>;

/** The top-level fields of a run machine's persisted snapshot at their defaults. */
const SNAPSHOT_DEFAULTS = { status: 'active', historyValue: {}, children: {} } as const;

/** The fields of a run machine's context at their defaults (see `compiler/run-context.ts`). */
const CONTEXT_DEFAULTS = {
  inputs: {},
  state: {},
  error: null,
  runError: null,
  returned: null,
} as const;

/** The mark that opens a compact snapshot: JSON never begins with it. */
const COMPACT_SNAPSHOT = '~';

/** Whether `value` is an object that is neither null nor an array. */
function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `value` is at `preset`: the same string, number or null, or an empty object for `{}`. */
function atDefault(value: unknown, preset: unknown): boolean {
  if (isObject(preset)) return isObject(value) && Object.keys(value).length === 0;
  return value === preset;
}

/**
 * `value` without the fields of `defaults` that it holds at their default; undefined when one of
 * those fields is missing (or undefined), since the compact form would read back with it.
 */
function withoutDefaults(value: Json, defaults: Json): Json | undefined {
  // Every save compacts each step record of its run: no arrays of entries made on the way.
  const out: Json = {};
  let present = 0;
  for (const name in value) {
    const v = value[name];
    if (!Object.hasOwn(defaults, name)) out[name] = v;
    else if (v === undefined) return undefined;
    else {
      present++;
      if (!atDefault(v, defaults[name])) out[name] = v;
    }
  }
  return present === Object.keys(defaults).length ? out : undefined;
}

/** Fresh copies of `defaults` (its empty objects new), for a value read back. */
function defaultsOf<T extends Json>(defaults: T): T {
  return structuredClone(defaults) as T;
}

// ---- what never changes ----

/** What a run keeps beside its record, snapshot and steps, and never changes (its `meta`). */
export interface RunMeta {
  /** Its directive's file, and the text (kept at its text key) with the text's content hash. */
  source: { file: string; text: string; hash?: string };
  projectDir: string;
  depth: number;
  parentRunId: string | null;
  trace?: RunTrace;
  tools?: Record<string, string>;
}

/** A meta as its compact JSON keeps it. */
interface CompactMeta {
  /** The project folder. */
  dir: string;
  /** The directive's file under `dir` (its path is `dir` + `/` + this)… */
  in?: string;
  /** …or its file as it is. */
  file?: string;
  /** Nesting depth, when not 0. */
  depth?: number;
  /** The parent's run id, for a child run. */
  parent?: string;
  trace?: RunTrace;
  tools?: Record<string, string>;
}

/**
 * A run's meta as compact JSON: its directive's file under the project folder when it is there,
 * its depth and parent only for a child run, and no text (kept at its text key) nor its hash (the
 * run's hash names it).
 */
export function compactMeta(meta: RunMeta): string {
  const { file } = meta.source;
  const dir = meta.projectDir;
  const under = dir !== '' && file.startsWith(`${dir}/`);
  const out: CompactMeta = {
    dir,
    ...(under ? { in: file.slice(dir.length + 1) } : { file }),
    ...(meta.depth !== 0 && { depth: meta.depth }),
    ...(meta.parentRunId !== null && { parent: meta.parentRunId }),
    ...(meta.trace && { trace: meta.trace }),
    ...(meta.tools && { tools: meta.tools }),
  };
  return JSON.stringify(out);
}

/** The meta whose compact JSON is `json`, less its source's text and hash (kept apart). */
export function fullMeta(json: string): Omit<RunMeta, 'source'> & { source: { file: string } } {
  const m = JSON.parse(json) as CompactMeta;
  return {
    source: { file: m.in === undefined ? (m.file ?? '') : `${m.dir}/${m.in}` },
    projectDir: m.dir,
    depth: m.depth ?? 0,
    parentRunId: m.parent ?? null,
    ...(m.trace && { trace: m.trace }),
    ...(m.tools && { tools: m.tools }),
  };
}

// ---- the run record ----

/**
 * A run record's compact JSON: without its id (the key of the run's hash names it), its `steps`
 * list (each entry is a field of its own), its `status` and `directive` (plain fields of the
 * hash) and its `outputs`, `error` and `endedAt` while they are null.
 */
export function compactRecord(record: RunRecord): string {
  const out: Json = { ...record };
  for (const name of ['runId', 'steps', 'status', 'directive'] as const) delete out[name];
  for (const name of ['outputs', 'error', 'endedAt'] as const)
    if (record[name] === null) delete out[name];
  return JSON.stringify(out);
}

/** The run record whose compact JSON is `json`, with what it left out. */
export function fullRecord(
  json: string,
  left: { runId: string; status: string; directive: string; steps: StepEntry[] },
): RunRecord {
  const { runId, status, directive, steps } = left;
  const stored = JSON.parse(json) as Partial<RunRecord>;
  // In the order the engine makes a record in, what follows in the order it was written.
  const record: RunRecord = {
    runId,
    directive,
    status: status as RunStatus,
    outputs: null,
    steps,
    error: null,
    startedAt: stored.startedAt ?? 0,
    endedAt: null,
  };
  return Object.assign(record, stored);
}

// ---- step records ----

/**
 * A step record's compact JSON (without the fields at their defaults while it is under way:
 * status running, one attempt, no result, error, start or end), or undefined when the record
 * lacks one of those fields (a `result` left undefined, which JSON cannot keep): such a record is
 * kept whole.
 */
export function compactStep(record: StepRecord): string | undefined {
  const out = withoutDefaults(record as unknown as Json, STEP_UNDER_WAY);
  return out && JSON.stringify(out);
}

/** The step record whose compact JSON is `json`. */
export function fullStep(json: string): StepRecord {
  return { ...defaultsOf(STEP_UNDER_WAY), ...(JSON.parse(json) as Partial<StepRecord>) };
}

// ---- snapshots ----

/**
 * A machine snapshot's JSON: a run machine's, compact (`~` then its JSON without the fields at
 * their defaults: status active, no history, no children, and in its context no inputs, state,
 * error or return); any other, as it is.
 */
export function compactSnapshot(snapshot: unknown): string {
  const top = isObject(snapshot) ? withoutDefaults(snapshot, SNAPSHOT_DEFAULTS) : undefined;
  const context =
    top !== undefined && isObject(top.context)
      ? withoutDefaults(top.context, CONTEXT_DEFAULTS)
      : undefined;
  if (context === undefined) return JSON.stringify(snapshot) ?? 'null';
  return COMPACT_SNAPSHOT + JSON.stringify({ ...top, context });
}

/** The snapshot whose JSON {@link compactSnapshot} wrote (or a snapshot's plain JSON). */
export function fullSnapshot(json: string): unknown {
  if (!json.startsWith(COMPACT_SNAPSHOT)) return JSON.parse(json) as unknown;
  const { value, context, ...rest } = JSON.parse(json.slice(COMPACT_SNAPSHOT.length)) as Json;
  const defaults = defaultsOf(SNAPSHOT_DEFAULTS);
  return {
    status: defaults.status,
    value,
    historyValue: defaults.historyValue,
    context: { ...defaultsOf(CONTEXT_DEFAULTS), ...(context as Json) },
    children: defaults.children,
    ...rest,
  };
}

// ---- counters ----

/** A run's counters without those at zero. */
export function compactCounters(counters: RunCounters): string {
  const out: Json = {};
  for (const [name, n] of Object.entries(counters)) if (n !== 0) out[name] = n;
  return JSON.stringify(out);
}

/** The counters whose compact JSON is `json`. */
export function fullCounters(json: string): RunCounters {
  return { transitions: 0, spawns: 0, ...(JSON.parse(json) as Partial<RunCounters>) };
}

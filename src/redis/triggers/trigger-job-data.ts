/** What a job of the triggers queue carries (see `trigger-worker.ts`), and how it is checked. */
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { REUSE_POLICIES, type ReusePolicy } from '../../operations/idempotency.js';

/** What a trigger job carries. */
export interface TriggerJobData {
  /** The directive's item id. */
  directive: string;
  inputs?: Record<string, unknown>;
  /** Starts one run per key within its window (default: the job's own id). */
  idempotencyKey?: string;
  /** When the key's run failed or was cancelled: `failed` starts a new one (default `never`). */
  reuse?: ReusePolicy;
  /** Tags for the run (name → value), over its directive's. */
  tags?: Record<string, string>;
  /** 1 to 10, higher first when workers are busy (over the directive's `<priority>`). */
  priority?: number;
  /** Answer with the run's record once it ends or waits, waiting at most this many seconds (≤ 600). */
  wait?: number;
}

/** The most a trigger job may wait for its run, seconds. */
export const MAX_TRIGGER_WAIT_S = 600;

/** A trigger job's data, checked: `INVALID_REQUEST` naming what is wrong. */
export function triggerData(data: unknown): TriggerJobData {
  const bad = (what: string) =>
    DirigentError.fatal(ErrorCode.INVALID_REQUEST, `A trigger job's data ${what}.`, {
      hint: 'Add jobs with data {"directive": "<item id>", "inputs": {…}, "idempotencyKey"?: "…", "reuse"?: "never" | "failed", "tags"?: {…}, "priority"?: 1-10, "wait"?: seconds}.',
    });
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw bad('is not a JSON object');
  const d = data as Record<string, unknown>;
  const known = new Set([
    'directive',
    'inputs',
    'idempotencyKey',
    'reuse',
    'tags',
    'priority',
    'wait',
  ]);
  const unknown = Object.keys(d).filter((k) => !known.has(k));
  if (unknown.length > 0) throw bad(`has unknown fields: ${unknown.join(', ')}`);
  if (typeof d.directive !== 'string' || d.directive === '')
    throw bad('needs "directive", the item id of a directive');
  if (
    d.inputs !== undefined &&
    (d.inputs === null || typeof d.inputs !== 'object' || Array.isArray(d.inputs))
  )
    throw bad('has "inputs" that is not an object of names to values');
  if (d.idempotencyKey !== undefined && typeof d.idempotencyKey !== 'string')
    throw bad('has an "idempotencyKey" that is not a string');
  if (d.reuse !== undefined && !REUSE_POLICIES.includes(d.reuse as ReusePolicy))
    throw bad(`has a "reuse" that is neither ${REUSE_POLICIES.map((p) => `"${p}"`).join(' nor ')}`);
  if (
    d.priority !== undefined &&
    !(
      typeof d.priority === 'number' &&
      Number.isInteger(d.priority) &&
      d.priority >= 1 &&
      d.priority <= 10
    )
  )
    throw bad('has a "priority" that is not a whole number from 1 to 10');
  if (
    d.wait !== undefined &&
    !(typeof d.wait === 'number' && d.wait >= 0 && d.wait <= MAX_TRIGGER_WAIT_S)
  )
    throw bad(`has a "wait" that is not a number of seconds from 0 to ${MAX_TRIGGER_WAIT_S}`);
  return d as unknown as TriggerJobData;
}

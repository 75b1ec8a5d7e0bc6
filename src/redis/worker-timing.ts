import { badOptionValue } from '../errors/request-errors.js';

/**
 * BullMQ's job locks: a job's lock lasts `lockMs` and is renewed at half of it while the worker
 * lives; every `lockMs` workers look for jobs whose lock lapsed (stalled) and take them up again.
 * Workers' leases (`worker-lease.ts`) take a dead worker's jobs over within seconds; these locks
 * are the backstop when no worker is left to notice. `$DIRIGENT_LOCK_MS` sets it (default 30 s,
 * BullMQ's).
 */
export interface WorkerTiming {
  lockMs: number;
}

/** The timing from the environment; `INVALID_REQUEST` for a `DIRIGENT_LOCK_MS` under 500. */
export function workerTiming(env: Record<string, string | undefined> = process.env): WorkerTiming {
  return { lockMs: msFromEnv(env, 'DIRIGENT_LOCK_MS', 500) ?? 30_000 };
}

/**
 * The whole number of ms the environment variable `name` holds: undefined when it is not set (or
 * empty), `INVALID_REQUEST` naming it when it is not a whole number of at least `min`. A setting
 * that is wrong stops the worker at its start rather than being put aside for the default.
 */
export function msFromEnv(
  env: Record<string, string | undefined>,
  name: string,
  min: number,
): number | undefined {
  const text = env[name]?.trim();
  if (text === undefined || text === '') return undefined;
  const ms = Number(text);
  if (Number.isInteger(ms) && ms >= min) return ms;
  throw badOptionValue(name, `a whole number of ms, at least ${min}`, text);
}

/** BullMQ worker options for a timing. */
export function bullWorkerTiming(t: WorkerTiming): {
  lockDuration: number;
  stalledInterval: number;
} {
  return { lockDuration: t.lockMs, stalledInterval: t.lockMs };
}

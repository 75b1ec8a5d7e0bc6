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

/** The timing from the environment. */
export function workerTiming(env: Record<string, string | undefined> = process.env): WorkerTiming {
  const ms = Number(env.DIRIGENT_LOCK_MS);
  return { lockMs: Number.isFinite(ms) && ms >= 500 ? ms : 30_000 };
}

/** BullMQ worker options for a timing. */
export function bullWorkerTiming(t: WorkerTiming): {
  lockDuration: number;
  stalledInterval: number;
} {
  return { lockDuration: t.lockMs, stalledInterval: t.lockMs };
}

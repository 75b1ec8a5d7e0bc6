/**
 * How fast a dead worker's work is taken over. A job's lock lasts `lockMs` and is renewed at half
 * of it while the worker lives; every `lockMs` workers look for jobs whose lock lapsed (stalled:
 * their worker died) and take them up again. The per-run lock has the same lease. Shorter means a
 * quicker takeover and more Redis traffic; `$DIRIGENT_LOCK_MS` sets it (default 30 s, BullMQ's).
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

/** BullMQ queue names and the default key prefix of a Dirigent deployment. */
export const QueueName = {
  /** Run jobs: start a run, resume it, deliver a signal, cancel it, wake it at a deadline. */
  RUNS: 'dirigent-runs',
  /** Tool jobs: one call of one tool. */
  TOOLS: 'dirigent-tools',
  /**
   * Trigger jobs: any BullMQ client, in any language, starts a run by adding a job
   * `{directive, inputs, idempotencyKey?, wait?}` here (see `redis/triggers/trigger-worker.ts`).
   */
  TRIGGERS: 'dirigent-triggers',
} as const;

/** The key prefix of BullMQ's keys and of Dirigent's own (run store, locks, cancel channel). */
export const DEFAULT_PREFIX = 'dirigent';

/** Pub/sub channel on which cancellations of running tool jobs are announced. */
export function cancelChannel(prefix: string): string {
  return `${prefix}:cancel`;
}

/** Pub/sub channel on which cancellations of runs being driven are announced. */
export function runCancelChannel(prefix: string): string {
  return `${prefix}:run-cancel`;
}

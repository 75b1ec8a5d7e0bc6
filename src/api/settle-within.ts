import type { FastifyReply } from 'fastify';
import type { RunRecord } from '../engine/run-record.js';
import type { ApiContext } from './api-context.js';

/**
 * `work`'s value if it resolves within `ms` (and before `closing` does), else `undefined`; a
 * rejection of `work` within that time rejects. Once the time is up, a later rejection of `work`
 * is ignored: the work goes on without whoever asked.
 */
export async function settleWithin<T>(
  work: Promise<T>,
  ms: number,
  closing: Promise<void>,
): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
    void closing.then(() => resolve(undefined));
  });
  void work.catch(() => {
    /* Seen by the race below while anyone waits; past the time, nobody asks (see above). */
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The answer of a route that waits for a run (a signal, a redrive): the run's record once `work`
 * resolves with it (the run ended or waits), within `waitSeconds` when given; else 202 with the
 * run's status as it stands.
 */
export async function recordOrAccepted(
  ctx: ApiContext,
  reply: FastifyReply,
  runId: string,
  work: Promise<RunRecord>,
  waitSeconds: number | undefined,
): Promise<RunRecord | FastifyReply> {
  const ms = waitSeconds === undefined ? 2 ** 31 - 1 : Math.round(waitSeconds * 1000);
  const record = await settleWithin(work, ms, ctx.closing);
  if (record !== undefined) return record;
  const now = await ctx.dirigent.get(runId);
  return reply.code(202).send({ runId, status: now.status });
}

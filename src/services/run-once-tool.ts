/**
 * A `once` bootstrap tool: run once per deployment (key prefix) and version (content hash of the
 * tool file), whatever the number of workers starting together.
 *
 * Every worker tries to claim `<prefix>:bootstrap:<itemId>:<hash>` with `SET NX` and a TTL
 * ({@link RedisLease}). The winner runs the tool, renewing the claim while it runs, then replaces
 * the claim with the outcome (`done`, or `failed` with the error), kept without expiry. The others
 * read the record: an outcome means the tool ran (they log that they skipped it); a claim means it
 * runs elsewhere, so they look again every `pollMs` until it has an outcome. A claim whose holder
 * died expires after `leaseMs`, and the next worker to look takes it over and runs the tool again.
 *
 * Guarantee: exactly once per version while workers live; at least once when a worker dies (or
 * loses Redis for a whole lease, or drains) while the tool runs, since the tool may have done part
 * or all of its work before another worker runs it again. Make once-tools idempotent.
 */
import { randomUUID } from 'node:crypto';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { callBootstrapTool } from './bootstrap-call.js';
import type { BootstrapContext } from './bootstrap-context.js';
import { bootstrapKeys } from './bootstrap-keys.js';
import type { BootstrapTool } from './bootstrap-tool.js';
import { readOnceRecord, type OnceRecord } from './once-record.js';
import { pause } from './pause.js';
import { RedisLease } from './redis-lease.js';

/** How a `once` tool ended, as this worker knows it. */
export type OnceOutcome = 'done' | 'failed' | 'stopped';

/**
 * Runs `tool` if no worker of the deployment has run this version of it, or waits for the worker
 * that runs it; resolves with the outcome (`stopped` when this worker drains first). Never rejects.
 */
export async function runOnceTool(
  ctx: BootstrapContext,
  tool: BootstrapTool,
): Promise<OnceOutcome> {
  const key = bootstrapKeys.once(ctx.prefix, tool.itemId, tool.hash);
  const fields = { tool: tool.itemId, mode: 'once', version: tool.hash.slice(0, 12) };
  let attempt = 0;
  let waiting = false;
  while (!ctx.stopping.aborted) {
    const claim: OnceRecord = {
      state: 'running',
      worker: ctx.worker,
      claim: randomUUID(),
      started_at: new Date().toISOString(),
    };
    let lease: RedisLease | undefined;
    let seen: OnceRecord | undefined;
    try {
      lease = await RedisLease.tryAcquire(ctx.redis, key, JSON.stringify(claim), ctx.leaseMs);
      if (lease === undefined) seen = await readOnceRecord(ctx.redis, key);
    } catch (err) {
      ctx.logger.warn(
        { ...fields, error: String(err) },
        `bootstrap tool "${tool.itemId}": Redis did not answer (${String(err)}); trying again`,
      );
      await pause(ctx.pollMs, ctx.stopping);
      continue;
    }
    if (lease !== undefined) {
      attempt++;
      const outcome = await runClaimed(ctx, tool, lease, claim, attempt, fields);
      if (outcome !== 'lost') return outcome;
      continue; // look again: another worker holds it now, or it has an outcome
    }
    if (seen === undefined) continue; // the claim expired in between: try to take it
    if (seen.state !== 'running') {
      ctx.logger.info(
        { ...fields, state: seen.state, by: seen.worker },
        `bootstrap tool "${tool.itemId}" (once): skipped, this version already ran on worker ${seen.worker} (${seen.state})`,
      );
      return seen.state;
    }
    if (!waiting) {
      waiting = true;
      ctx.logger.info(
        { ...fields, by: seen.worker },
        `bootstrap tool "${tool.itemId}" (once): runs on worker ${seen.worker}; waiting for its outcome`,
      );
    }
    await pause(ctx.pollMs, ctx.stopping);
  }
  return 'stopped';
}

/** Runs the tool under the claim this worker holds, and records the outcome. */
async function runClaimed(
  ctx: BootstrapContext,
  tool: BootstrapTool,
  lease: RedisLease,
  claim: OnceRecord,
  attempt: number,
  fields: Record<string, string>,
): Promise<OnceOutcome | 'lost'> {
  ctx.logger.info(
    { ...fields, attempt },
    `bootstrap tool "${tool.itemId}" (once) started on this worker`,
  );
  const startedAt = Date.now();
  let error: DirigentError | undefined;
  try {
    await callBootstrapTool(ctx, tool, attempt, lease.lost);
  } catch (err) {
    error = DirigentError.from(err);
  }
  const ms = Date.now() - startedAt;
  if (error !== undefined && lease.lost.aborted) {
    ctx.logger.warn(
      { ...fields, code: ErrorCode.LOCK_LOST },
      `bootstrap tool "${tool.itemId}" (once) was stopped: ${(lease.lost.reason as Error).message} Another worker may run it again.`,
    );
    return 'lost';
  }
  if (error !== undefined && ctx.stopping.aborted) {
    await lease.release();
    ctx.logger.info(
      { ...fields, ms },
      `bootstrap tool "${tool.itemId}" (once) was stopped by the drain; its claim is released, so another worker runs it again`,
    );
    return 'stopped';
  }
  const final: OnceRecord = {
    ...claim,
    state: error === undefined ? 'done' : 'failed',
    finished_at: new Date().toISOString(),
    ...(error !== undefined && { error: error.toJSON() }),
  };
  const settled = await lease.settle(JSON.stringify(final)).catch(() => false);
  if (!settled) {
    ctx.logger.warn(
      { ...fields, code: ErrorCode.LOCK_LOST, state: final.state },
      `bootstrap tool "${tool.itemId}" (once) ended (${final.state}) but its claim had lapsed; another worker may run it again`,
    );
    return 'lost';
  }
  if (error === undefined) {
    ctx.logger.info(
      { ...fields, ms },
      `bootstrap tool "${tool.itemId}" (once) finished in ${ms} ms`,
    );
    return 'done';
  }
  ctx.logger.error(
    { ...fields, ms, code: error.code, error: error.message },
    `bootstrap tool "${tool.itemId}" (once) failed: ${error.code}: ${error.message}`,
  );
  return 'failed';
}

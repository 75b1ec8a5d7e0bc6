/**
 * A `continuous` bootstrap tool: one instance per deployment (key prefix) runs at a time, kept
 * running.
 *
 * Every worker tries to take the tool's lease (`<prefix>:bootstrap-lease:<itemId>`, a
 * {@link RedisLease}) every `pollMs`. The holder runs the tool; when the tool stops (returns or
 * fails) it starts it again after a {@link RestartBackoff} delay, holding the lease meanwhile.
 * When the holder dies its renewals stop, the lease expires after `leaseMs`, and the next worker
 * to try takes it over, so the tool runs again within `leaseMs + pollMs`. A holder that loses its
 * lease (Redis unreachable for a whole lease) stops its tool at once. On drain the tool is
 * stopped (its signal aborted, which kills a subprocess tool's process group) and the lease
 * released, so another worker takes over within `pollMs`.
 *
 * Guarantee: never two instances at once. A worker killed outright (SIGKILL) takes its tool's
 * process group with it (`runtimes/group-reaper.ts`), well within `leaseMs`; only a tool that
 * leaves its group (`setsid`) could outlive it.
 */
import { randomUUID } from 'node:crypto';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { callBootstrapTool } from './bootstrap-call.js';
import type { BootstrapContext } from './bootstrap-context.js';
import { bootstrapKeys } from './bootstrap-keys.js';
import type { BootstrapTool } from './bootstrap-tool.js';
import { pause } from './pause.js';
import { RedisLease } from './redis-lease.js';
import { RestartBackoff } from './restart-backoff.js';

/** The lease's value: who holds it. */
interface LeaseValue {
  worker: string;
  claim: string;
  version: string;
  since: string;
}

/** The loop of one `continuous` tool on one worker; see the module comment. */
export class ContinuousTool {
  private seen!: () => void;
  /**
   * Resolves the first time this worker sees the tool running in the deployment (it took the
   * lease and started the tool, or found the lease held by another worker): what tools that
   * `wait_for` it wait for.
   */
  readonly running: Promise<void> = new Promise((resolve) => (this.seen = resolve));
  private readonly fields: Record<string, string>;

  constructor(
    private readonly ctx: BootstrapContext,
    readonly tool: BootstrapTool,
  ) {
    this.fields = { tool: tool.itemId, mode: 'continuous', version: tool.hash.slice(0, 12) };
  }

  /** Tries to take the lease and serves the tool while it holds it, until the worker drains. */
  async run(): Promise<void> {
    const { ctx, tool } = this;
    const key = bootstrapKeys.continuous(ctx.prefix, tool.itemId);
    let standingBy = false;
    while (!ctx.stopping.aborted) {
      const value: LeaseValue = {
        worker: ctx.worker,
        claim: randomUUID(),
        version: tool.hash.slice(0, 12),
        since: new Date().toISOString(),
      };
      let lease: RedisLease | undefined;
      let holder: string | null = null;
      try {
        lease = await RedisLease.tryAcquire(ctx.redis, key, JSON.stringify(value), ctx.leaseMs);
        if (lease === undefined && !standingBy) holder = await ctx.redis.get(key);
      } catch (err) {
        ctx.logger.warn(
          { ...this.fields, error: String(err) },
          `bootstrap tool "${tool.itemId}": Redis did not answer (${String(err)}); trying again`,
        );
        await pause(ctx.pollMs, ctx.stopping);
        continue;
      }
      if (lease === undefined) {
        this.seen();
        if (!standingBy) {
          standingBy = true;
          const by = holderOf(holder);
          ctx.logger.info(
            { ...this.fields, by },
            `bootstrap tool "${tool.itemId}" (continuous) runs on worker ${by}; this worker stands by`,
          );
        }
        await pause(ctx.pollMs, ctx.stopping);
        continue;
      }
      standingBy = false;
      this.seen();
      await this.serve(lease);
    }
  }

  /** Runs the tool, and again whenever it stops, while this worker holds the lease. */
  private async serve(lease: RedisLease): Promise<void> {
    const { ctx, tool, fields } = this;
    const backoff = new RestartBackoff();
    let attempt = 0;
    try {
      while (!ctx.stopping.aborted && !lease.lost.aborted) {
        attempt++;
        ctx.logger.info(
          { ...fields, attempt },
          attempt === 1
            ? `bootstrap tool "${tool.itemId}" (continuous) started on this worker`
            : `bootstrap tool "${tool.itemId}" (continuous) restarted (start ${attempt})`,
        );
        const startedAt = Date.now();
        let failed = false;
        try {
          await callBootstrapTool(ctx, tool, attempt, lease.lost);
          ctx.logger.info(
            { ...fields, attempt, ms: Date.now() - startedAt },
            `bootstrap tool "${tool.itemId}" (continuous) returned after ${Date.now() - startedAt} ms`,
          );
        } catch (err) {
          if (ctx.stopping.aborted || lease.lost.aborted) break;
          failed = true;
          const e = DirigentError.from(err);
          ctx.logger.error(
            { ...fields, attempt, ms: Date.now() - startedAt, code: e.code, error: e.message },
            `bootstrap tool "${tool.itemId}" (continuous) failed: ${e.code}: ${e.message}`,
          );
        }
        if (ctx.stopping.aborted || lease.lost.aborted) break;
        const delay = backoff.next(failed, Date.now() - startedAt);
        ctx.logger.info(
          { ...fields, attempt, delay_ms: delay },
          `bootstrap tool "${tool.itemId}" (continuous) stopped; restarting in ${delay} ms`,
        );
        await pause(delay, ctx.stopping, lease.lost);
      }
    } finally {
      const lost = lease.lost.aborted;
      await lease.release();
      if (ctx.stopping.aborted)
        ctx.logger.info(
          fields,
          `bootstrap tool "${tool.itemId}" (continuous) stopped by the drain; lease released`,
        );
      else if (lost)
        ctx.logger.warn(
          { ...fields, code: ErrorCode.LOCK_LOST },
          `bootstrap tool "${tool.itemId}" (continuous) stopped: ${(lease.lost.reason as Error).message} Another worker takes over.`,
        );
    }
  }
}

function holderOf(value: string | null): string {
  if (value === null) return 'another worker';
  try {
    return (JSON.parse(value) as LeaseValue).worker ?? 'another worker';
  } catch {
    return 'another worker';
  }
}

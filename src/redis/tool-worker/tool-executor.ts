/**
 * Running tool calls on a worker, whether they came as jobs from the tools queue or were handed to
 * it in process by the run worker beside it (eager calls, see `tool-worker.ts`): the project's item
 * dispatcher, the calls running now (each stopped by a cancellation, by its deadline, or when the
 * worker's lease lapses), and the log of their failures.
 */
import { resolve } from 'node:path';
import type { Attributes } from '@opentelemetry/api';
import { DelayedError } from 'bullmq';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ItemResolver } from '../../items/item-resolver.js';
import { defaultSpaces } from '../../items/space.js';
import type { ToolItem } from '../../items/tool-item.js';
import type { LockSlot } from '../../locks/keyed-semaphore.js';
import { loadProjectPolicy } from '../../policy/project-policy.js';
import { failureOutcome } from '../../telemetry/failure-outcome.js';
import { traceFields, type Logger } from '../../telemetry/logger.js';
import { parentOf, type Telemetry } from '../../telemetry/telemetry.js';
import { ItemDispatcher } from '../../tools/item-dispatcher.js';
import type { ToolJobSpan } from '../job-spans.js';
import { checkToolHash } from '../run-source.js';
import { jobCancelled, remember, stopAt } from './tool-job-stops.js';
import type { ToolJobData } from '../tool-job.js';

/** How a call ended. */
export type CallOutcome = { ok: true; value: unknown } | { ok: false; error: DirigentError };

/**
 * Whether a call whose tool is known may run now: holding the slots of its concurrency limits
 * (none without limits), with the span it runs under when the admission made one; or `'declined'`
 * (it is left to run elsewhere). A job whose gate is closed is deferred by a thrown `DelayedError`.
 */
export type Admission = { slots: LockSlot[]; span?: ToolJobSpan | undefined } | 'declined';

/** What a {@link ToolExecutor} needs. */
export interface ToolExecutorOptions {
  /** The project served: tools resolve in it and are confined to it. */
  projectDir: string;
  telemetry: Telemetry | undefined;
  log: Logger;
  /** Told each time a call ends, once it no longer counts in {@link ToolExecutor.size}. */
  ended?: () => void;
}

/** Runs the calls of one worker (see the module comment). */
export class ToolExecutor {
  readonly projectDir: string;
  private readonly running = new Map<string, { controller: AbortController; data: ToolJobData }>();
  /** Calls whose cancellation was heard, newest last, for a call that starts afterwards. */
  private readonly cancelled = new Set<string>();
  /** The dispatcher of the project served, made on first use. */
  private projectDispatcher: ItemDispatcher | undefined;

  constructor(private readonly options: ToolExecutorOptions) {
    this.projectDir = resolve(options.projectDir);
  }

  /** Calls running now (admitted or not yet). */
  get size(): number {
    return this.running.size;
  }

  /**
   * Runs call `id` and resolves with its outcome, or undefined when `admit` declined it: resolves
   * its tool (checked against the hash the run was started with), asks `admit` whether it may run
   * now, then calls it. The call stops on a cancellation ({@link stop}), at its deadline, when its
   * slots' leases lapse, on {@link stopAll}, or when `signal` aborts. A failure is an outcome, never
   * a rejection (but a deferral's `DelayedError`).
   */
  async run(
    id: string,
    d: ToolJobData,
    admit: (tool: ToolItem | undefined) => Promise<Admission>,
    options: {
      span?: ToolJobSpan | undefined;
      signal?: AbortSignal;
      spanAttributes?: Attributes;
    } = {},
  ): Promise<CallOutcome | undefined> {
    const controller = new AbortController();
    this.running.set(id, { controller, data: d });
    // The caller's signal stops the call too (cheaper than `AbortSignal.any`, on every call).
    const outer = options.signal;
    const forward = () => controller.abort(outer?.reason);
    if (outer?.aborted) forward();
    else outer?.addEventListener('abort', forward, { once: true });
    let span = options.span;
    let slots: LockSlot[] = [];
    let deadline: NodeJS.Timeout | undefined;
    let stopped = controller.signal;
    try {
      if (this.cancelled.has(id)) throw jobCancelled(id);
      const dispatcher = this.dispatcher();
      const chain = dispatcher.isBuiltin(d.itemId)
        ? undefined
        : await dispatcher.chainOf(d.itemId, this.projectDir);
      if (chain !== undefined) await checkToolHash(d.itemId, chain[0]!.file, d.toolHash);
      const admission = await admit(chain?.[0]!.item);
      if (admission === 'declined') return undefined;
      slots = admission.slots;
      span ??= admission.span;
      if (slots.length > 0)
        stopped = AbortSignal.any([controller.signal, ...slots.map((s) => s.signal)]);
      if (d.deadline !== undefined) deadline = stopAt(d.deadline, controller, d.step);
      const call = {
        ...d,
        projectDir: this.projectDir,
        signal: stopped,
        ...(span
          ? { traceparent: span.traceparent, spanAttributes: span.callAttributes }
          : options.spanAttributes && { spanAttributes: options.spanAttributes }),
      };
      const value = await dispatcher.dispatch(call, chain);
      span?.finish('completed');
      return { ok: true, value };
    } catch (err) {
      if (err instanceof DelayedError) throw err;
      const error = DirigentError.from(stopped.aborted ? stopped.reason : err);
      span?.finish(failureOutcome(error), error);
      this.options.log.warn(
        {
          ...traceFields(d.runId, span?.span ?? parentOf(d.traceparent)),
          tool: d.itemId,
          step: d.step,
          error_code: error.code,
        },
        `tool ${d.itemId} failed: ${error.message}`,
      );
      return { ok: false, error };
    } finally {
      outer?.removeEventListener('abort', forward);
      clearTimeout(deadline);
      this.running.delete(id);
      this.options.ended?.();
      await Promise.all(slots.map((s) => s.release()));
    }
  }

  /** Stops call `id` (cancelled), now if it runs, or when it starts if it does later. */
  stop(id: string): void {
    remember(this.cancelled, id);
    this.running.get(id)?.controller.abort(jobCancelled(id));
  }

  /**
   * Stops call `id` if it runs now, with the error `reason` makes of it, and remembers nothing of
   * it: the call may be made again under the same id (its run goes on elsewhere, or here).
   */
  stopRunning(id: string, reason: (d: ToolJobData) => DirigentError): void {
    const running = this.running.get(id);
    running?.controller.abort(reason(running.data));
  }

  /** Stops every call running now, each with the error `reason` makes of it. */
  stopAll(reason: (d: ToolJobData) => DirigentError): void {
    for (const { controller, data } of this.running.values()) controller.abort(reason(data));
  }

  /** Ends the tools' warm processes (Python hosts, Deno sandboxes, MCP clients). */
  async close(): Promise<void> {
    await this.projectDispatcher?.close();
  }

  private dispatcher(): ItemDispatcher {
    this.projectDispatcher ??= new ItemDispatcher(
      new ItemResolver(defaultSpaces(this.projectDir)),
      {
        limits: loadProjectPolicy(this.projectDir).limits,
        ...(this.options.telemetry && { telemetry: this.options.telemetry }),
      },
    );
    return this.projectDispatcher;
  }
}

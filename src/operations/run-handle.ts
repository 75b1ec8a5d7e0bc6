/**
 * A handle on one run, as `Dirigent.start` returns it (the library's front door, as Temporal's
 * client gives a workflow handle): read how it stands, wait for it, signal, cancel or watch it,
 * without carrying its id around.
 *
 * ```ts
 * const run = await dirigent.start({ directive: 'orders/ship', inputs: { order: 42 } });
 * for await (const event of await run.watch()) console.log(event.type);
 * const outputs = await run.result(); // throws the run's error if it failed
 * ```
 */
import type { RunRecord } from '../engine/run-record.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { CancelOptions } from '../engine/cancel-options.js';
import { ends } from '../run-backend/run-feed-event.js';
import type { FollowOptions, RunFeed } from '../run-backend/run-feed.js';

/** What a handle asks of the operations: the run's operations, by id. */
export interface RunOperations {
  get(runId: string): Promise<RunRecord>;
  wait(runId: string, options?: { timeoutMs?: number }): Promise<RunRecord>;
  signal(runId: string, name: string, payload: unknown): Promise<RunRecord>;
  cancel(runId: string, reason?: string, options?: CancelOptions): Promise<RunRecord>;
  redrive(runId: string, options?: { by?: string }): Promise<RunRecord>;
  watch(runId: string, options?: FollowOptions): Promise<RunFeed>;
}

/** See the module comment. */
export class RunHandle {
  /**
   * `created`: whether the start that made this handle started the run (false: its idempotency
   * key's run was there already); `record`: the run's record as it stood then (`queued` on
   * Redis, unless the run was there already).
   */
  constructor(
    private readonly operations: RunOperations,
    readonly runId: string,
    readonly created: boolean,
    readonly record: RunRecord,
  ) {}

  /** The run's id (the same as {@link runId}). */
  get id(): string {
    return this.runId;
  }

  /** The run's record as it stands now. */
  status(): Promise<RunRecord> {
    return this.operations.get(this.runId);
  }

  /** The run's record once it ends or waits for a signal, or as it stands after `timeoutMs`. */
  wait(options: { timeoutMs?: number } = {}): Promise<RunRecord> {
    return this.operations.wait(this.runId, options);
  }

  /**
   * The run's outputs once it completes, however long it waits for signals meanwhile. Rejects
   * with the run's own error (its code, its message, the record in `details.record`) when it
   * fails or is cancelled.
   */
  async result(): Promise<Record<string, unknown>> {
    const record = await this.ended();
    if (record.status === 'completed') return record.outputs ?? {};
    const error = record.error;
    // The record may come from a newer worker: fromJSON keeps a code this version does not know.
    const sent = error ? DirigentError.fromJSON({ ...error, retryable: false }) : undefined;
    throw DirigentError.fatal(
      sent?.code ?? (record.status === 'cancelled' ? ErrorCode.CANCELLED : ErrorCode.INTERNAL),
      `Run ${this.runId} ${record.status}${error ? `: ${error.message}` : '.'}`,
      {
        details: { ...sent?.details, runId: this.runId, status: record.status, record },
        ...(error?.location !== undefined && { location: error.location }),
      },
    );
  }

  /** Sends signal `name` with `payload`; resolves once the run ends or waits again. */
  signal(name: string, payload: unknown = null): Promise<RunRecord> {
    return this.operations.signal(this.runId, name, payload);
  }

  /**
   * Cancels the run (`RUN_ENDED` when it has ended already), after the compensations of its
   * completed steps unless `options.compensate` is false.
   */
  cancel(reason?: string, options?: CancelOptions): Promise<RunRecord> {
    return this.operations.cancel(this.runId, reason, options);
  }

  /**
   * Redrives the run after it failed or was cancelled: it goes on under its id from the step that
   * failed, its completed steps kept; resolves once it ends or waits again (`RUN_NOT_REDRIVABLE`
   * for a run that did not fail and was not cancelled).
   */
  redrive(options: { by?: string } = {}): Promise<RunRecord> {
    return this.operations.redrive(this.runId, options);
  }

  /** The run's event feed: its record (`run.state`), then every event after it, to its end. */
  watch(options: FollowOptions = {}): Promise<RunFeed> {
    return this.operations.watch(this.runId, options);
  }

  /** The run's record once it has ended, read from its feed. */
  private async ended(): Promise<RunRecord> {
    const feed = await this.watch();
    let last: RunRecord | undefined;
    for await (const event of feed) {
      if (!ends(event, this.runId)) continue;
      last = event.type === 'run.ended' || event.type === 'run.state' ? event.record : undefined;
    }
    // A feed ends early only when it was closed or failed: the record says how the run stands.
    return last ?? this.status();
  }
}

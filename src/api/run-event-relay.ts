/**
 * A run's progress as server-sent events: the record as it stands first (`run.state`), then
 * `step.started`, `step.ended`, `step.retrying`, `run.waiting` as they happen, and `run.ended`
 * last, after which the stream ends. Step events of child runs are passed on too (their `runId`
 * says whose); `run.*` events are the watched run's own. `Dirigent.watch` gives the record and,
 * from then on, what follows it, so nothing is told twice or missed; events heard before the
 * stream is open wait for it.
 */
import type { EngineObserver } from '../engine/engine-options.js';
import type { RunRecord } from '../engine/run-record.js';
import type { SseStream } from './sse-stream.js';

const ENDED = new Set(['completed', 'failed', 'cancelled']);

/** See the module comment. */
export class RunEventRelay {
  private stream: SseStream | undefined;
  /** What was heard before the stream opened. */
  private early: (() => void)[] = [];

  constructor(private readonly runId: string) {}

  /** The observer to watch the run with. */
  readonly observer: EngineObserver = {
    stepStarted: (runId, step, attempt) => this.send('step.started', { runId, step, attempt }),
    stepEnded: (runId, entry) => this.send('step.ended', { runId, ...entry }),
    stepRetrying: (runId, step, error, delayMs) =>
      this.send('step.retrying', { runId, step, error, delayMs }),
    runWaiting: (runId, waiting) => {
      if (runId === this.runId) this.send('run.waiting', { runId, waiting });
    },
    runEnded: (record) => {
      if (record.runId === this.runId) this.later(() => this.finish(record));
    },
  };

  /** Sends `record` as `run.state` on `stream`, then what was heard meanwhile, then goes live. */
  begin(record: RunRecord, stream: SseStream): void {
    this.stream = stream;
    stream.send('run.state', record);
    if (ENDED.has(record.status)) return this.finish(record);
    const early = this.early;
    this.early = [];
    for (const tell of early) tell();
  }

  private send(event: string, data: unknown): void {
    this.later(() => this.stream!.send(event, data));
  }

  /** Does `tell` now, or once the stream is open; never after it ended. */
  private later(tell: () => void): void {
    if (this.stream === undefined) this.early.push(tell);
    else if (!this.stream.isEnded) tell();
  }

  private finish(record: RunRecord): void {
    this.stream!.send('run.ended', record);
    this.stream!.end();
  }
}

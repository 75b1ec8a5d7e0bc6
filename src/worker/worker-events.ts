/**
 * The events of a {@link DirigentWorker}, for the programs that embed one (graphile-worker's
 * `WorkerEvents`): what happens to the runs it drives and the tool calls it runs, and to the
 * worker itself. Subscribe on `worker.events`:
 *
 * ```ts
 * const worker = new DirigentWorker({ redis: 'redis://127.0.0.1:6379' });
 * worker.events.on('run:ended', ({ record }) => metrics.count(record.status));
 * worker.events.on('tool:failed', (e) => log.warn(`${e.itemId} failed in ${e.runId}: ${e.error.message}`));
 * await worker.start();
 * ```
 *
 * Listeners are called synchronously, in the order they were added, on the worker's own path: one
 * that has slow work to do starts it and returns. A listener that throws (or returns a promise that
 * rejects) does not break the worker: its error is told as an `error` event (source `listener`),
 * and an `error` no listener takes is logged.
 *
 * @see {@link WorkerEvents} for the events and what each tells.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import type { RunWorkerEvents } from '../redis/run-worker/run-worker-options.js';
import type { ToolWorkerEvents } from '../redis/tool-worker/tool-worker-options.js';
import type { WorkerQueue } from './worker-options.js';

/** The worker serves: every queue it was asked to is taken from, its services are starting. */
export interface WorkerReadyEvent {
  /** The queues it takes jobs from. */
  queues: WorkerQueue[];
  prefix: string;
  /** The deployment's number of shards, and those this worker serves. */
  shards: { count: number; served: number[] };
  /** The project folder it serves (absolute). */
  projectDir: string;
  /** Its parts' names in the deployment (lease names), for the queues it serves. */
  names: { runs?: string; tools?: string };
  /** Tool jobs it runs at once, and runs it drives at once. */
  concurrency: { tools: number; runs: number };
}

/** The worker began to close: it takes no more jobs and drains what it has. */
export interface WorkerDrainingEvent {
  /** Runs it was driving when it began (each is handed back unless it ends first). */
  runs: number;
}

/** Something went wrong beside the jobs: the worker goes on. */
export interface WorkerErrorEvent {
  /**
   * Where: a part of the worker (its BullMQ workers of `runs`, `tools` or `triggers`), its
   * closing (`close`), or a listener of another event that threw (`listener`).
   */
  source: WorkerQueue | 'close' | 'listener';
  error: DirigentError;
}

/**
 * A {@link DirigentWorker}'s events, by name (see the module comment): each is told with one
 * object, the type given here.
 *
 * - `run:started`: a worker began driving a new run (nothing of it was stored before).
 * - `run:ended`: a run this worker drove completed, failed or was cancelled; with its record.
 * - `run:taken-over`: this worker resumed a run whose driver died or was cut off, naming it when
 *   known.
 * - `run:handed-back`: closing, this worker gave a run back to the queue.
 * - `run:lost`: another worker took over a run this one drove (this one's lease had lapsed).
 * - `tool:failed`: a tool call failed on this worker, with its error and whether it is retryable.
 * - `worker:ready`, `worker:draining`, `worker:closed`: the worker's own life.
 * - `error`: something failed beside the jobs (a connection, a listener); the worker goes on.
 */
export interface WorkerEvents extends RunWorkerEvents, ToolWorkerEvents {
  /** The worker serves (see {@link WorkerReadyEvent}). */
  'worker:ready': WorkerReadyEvent;
  /** `close()` began: no more jobs are taken (see {@link WorkerDrainingEvent}). */
  'worker:draining': WorkerDrainingEvent;
  /** The worker has drained and closed its connections. */
  'worker:closed': Record<string, never>;
  /** Something failed beside the jobs (see {@link WorkerErrorEvent}). */
  error: WorkerErrorEvent;
}

/** A listener of event `K`. */
export type WorkerEventListener<K extends keyof WorkerEvents> = (
  event: WorkerEvents[K],
) => void | Promise<void>;

/** Where a program subscribes to a worker's events ({@link DirigentWorker.events}). */
export interface WorkerEventSource {
  /** Calls `listener` with every event `name` from now on. */
  on<K extends keyof WorkerEvents>(name: K, listener: WorkerEventListener<K>): this;
  /** Calls `listener` with the next event `name` only. */
  once<K extends keyof WorkerEvents>(name: K, listener: WorkerEventListener<K>): this;
  /** Stops calling `listener` (added with `on` or `once`). */
  off<K extends keyof WorkerEvents>(name: K, listener: WorkerEventListener<K>): this;
  /** How many listeners event `name` has. */
  listenerCount(name: keyof WorkerEvents): number;
}

/** A listener as added, and what is called for it (itself, or what `once` wrapped it in). */
interface Entry {
  listener: unknown;
  call: (event: never) => void | Promise<void>;
}

/**
 * The worker's side of {@link WorkerEventSource}: {@link emit} calls the listeners, and nothing a
 * listener does reaches the caller (see the module comment).
 */
export class WorkerEventEmitter implements WorkerEventSource {
  /** Each event's listeners, in the order they were added. */
  private readonly listeners = new Map<keyof WorkerEvents, Entry[]>();

  /** `unheard`: where an `error` goes when no listener takes it (or a listener of it threw). */
  constructor(private readonly unheard: (event: WorkerErrorEvent) => void) {}

  on<K extends keyof WorkerEvents>(name: K, listener: WorkerEventListener<K>): this {
    return this.add(name, listener, listener);
  }

  once<K extends keyof WorkerEvents>(name: K, listener: WorkerEventListener<K>): this {
    const once: WorkerEventListener<K> = (event) => {
      this.off(name, listener);
      return listener(event);
    };
    return this.add(name, listener, once);
  }

  off<K extends keyof WorkerEvents>(name: K, listener: WorkerEventListener<K>): this {
    const list = this.listeners.get(name);
    const at = list?.findIndex((entry) => entry.listener === listener) ?? -1;
    if (at >= 0) list!.splice(at, 1);
    return this;
  }

  listenerCount(name: keyof WorkerEvents): number {
    return this.listeners.get(name)?.length ?? 0;
  }

  /**
   * Calls the listeners of `name` with `event`, in order; returns at once. A listener's error (or
   * rejection) becomes an `error` event of source `listener`.
   */
  emit<K extends keyof WorkerEvents>(name: K, event: WorkerEvents[K]): void {
    const list = this.listeners.get(name) ?? [];
    if (name === 'error' && list.length === 0) {
      this.unheard(event as WorkerErrorEvent);
      return;
    }
    // A copy: a `once` listener leaves the list while it is gone through.
    for (const entry of [...list]) {
      try {
        const returned = (entry.call as WorkerEventListener<K>)(event);
        if (returned instanceof Promise)
          returned.catch((err: unknown) => this.listenerFailed(name, err));
      } catch (err) {
        this.listenerFailed(name, err);
      }
    }
  }

  private add<K extends keyof WorkerEvents>(
    name: K,
    listener: WorkerEventListener<K>,
    call: WorkerEventListener<K>,
  ): this {
    const list = this.listeners.get(name) ?? [];
    list.push({ listener, call: call as Entry['call'] });
    this.listeners.set(name, list);
    return this;
  }

  /** A listener of an `error` that throws is logged, never told again as an `error`. */
  private listenerFailed(name: keyof WorkerEvents, err: unknown): void {
    const error = DirigentError.from(err);
    const event: WorkerErrorEvent = { source: 'listener', error };
    if (name === 'error') this.unheard(event);
    else this.emit('error', event);
  }
}

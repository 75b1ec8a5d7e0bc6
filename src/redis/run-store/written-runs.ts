/**
 * What a run store last wrote (or read) for its most recent runs, so that a save sends only the
 * fields that changed, and the order of its writes: saves of one run apply in call order.
 */
import { randomBytes } from 'node:crypto';
import type { Written } from './run-hash.js';

/** The fields last written per run (at most `max` runs), the etags of writes, and their order. */
export class WrittenRuns {
  private readonly entries = new Map<string, Written>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly writer = randomBytes(6).toString('hex');
  private writes = 0;

  constructor(private readonly max: number) {}

  /** What this store last wrote or read for the run, if it still remembers. */
  get(runId: string): Written | undefined {
    return this.entries.get(runId);
  }

  /** Remembers a write (or read), forgetting the least recent run beyond `max`. */
  remember(runId: string, entry: Written): void {
    if (this.max === 0) return;
    this.entries.delete(runId);
    this.entries.set(runId, entry);
    if (this.entries.size > this.max) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  /** Forgets the run: its next save sends every field. */
  forget(runId: string): void {
    this.entries.delete(runId);
  }

  /** A new etag: the identity of a write, unique to this store. */
  nextEtag(): string {
    return `${this.writer}:${++this.writes}`;
  }

  /** Runs `work` after the work already queued for this run, so that saves apply in call order. */
  serially<T>(runId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(runId) ?? Promise.resolve();
    const result = previous.then(work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(runId, tail);
    void tail.then(() => {
      if (this.queues.get(runId) === tail) this.queues.delete(runId);
    });
    return result;
  }
}

/**
 * Eager calls waiting a moment for a tool slot of their own worker (see `tool-worker.ts`): a call
 * the run worker offers to run in process when every slot is taken waits, first come first
 * served, for the next slot to free, ahead of the tools queue's jobs; one that has waited
 * {@link EAGER_SLOT_WAIT_MS} goes to the queue after all, for whichever worker frees a slot first.
 * Where one worker serves many quick calls, this saves each a job (about 28 Redis commands) and a
 * second save of its run; where the slots hold long calls, a call is held up this long at most
 * before it goes where it would have gone at once.
 */

/** How long an eager call waits at most for a slot of its own worker before it becomes a job. */
export const EAGER_SLOT_WAIT_MS = 100;

/**
 * How a wait ended: a slot for the call; the call goes to the queue (its while is over, it was
 * aborted, or the worker is closing); or it is stopped as lost (its run's drive was lost with the
 * worker's lease, and whoever resumes the run makes the call anew).
 */
export type SlotWait = 'slot' | 'queue' | 'lost';

interface Waiter {
  resolve: (ended: SlotWait) => void;
  timer: NodeJS.Timeout;
}

/** The calls of one worker waiting for a slot, oldest first. */
export class SlotWaits {
  /** By call id; a Map keeps insertion order, so the first key is the oldest waiter. */
  private readonly waiters = new Map<string, Waiter>();

  /** `waitMs`: how long a call waits at most. */
  constructor(readonly waitMs = EAGER_SLOT_WAIT_MS) {}

  /** Calls waiting now. */
  get size(): number {
    return this.waiters.size;
  }

  /** Resolves when call `id` gets a slot ({@link handOver}), waited its while, or is ended. */
  wait(id: string): Promise<SlotWait> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.end(id, 'queue'), this.waitMs);
      this.waiters.set(id, { resolve, timer });
    });
  }

  /** Gives a slot that just freed to the oldest waiter; false when no call waits. */
  handOver(): boolean {
    if (this.waiters.size === 0) return false; // every call's end asks: most find no waiter
    const oldest = this.waiters.keys().next();
    return !oldest.done && this.end(oldest.value, 'slot');
  }

  /** Ends call `id`'s wait with `how`; false when it does not wait. */
  end(id: string, how: SlotWait): boolean {
    const waiter = this.waiters.get(id);
    if (waiter === undefined) return false;
    this.waiters.delete(id);
    clearTimeout(waiter.timer);
    waiter.resolve(how);
    return true;
  }

  /** Ends every wait with `how`. */
  endAll(how: SlotWait): void {
    for (const id of [...this.waiters.keys()]) this.end(id, how);
  }
}

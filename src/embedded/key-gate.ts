/**
 * Run concurrency keys in one process (see `engine/run-concurrency.ts`): per directive and
 * rendered key, how many runs hold a slot, and the starts waiting for one, in start order.
 */

/** A start waiting for a slot: called when it takes one. */
type Waiter = { runId: string; begin: () => void };

/** See the module comment. */
export class KeyGate {
  private readonly keys = new Map<string, { held: number; waiting: Waiter[] }>();

  /** Takes a slot of `key` for a run if one is free; else queues `begin` for when one frees. */
  enter(key: string, limit: number, runId: string, begin: () => void): boolean {
    let k = this.keys.get(key);
    if (k === undefined) this.keys.set(key, (k = { held: 0, waiting: [] }));
    if (k.held < limit && k.waiting.length === 0) {
      k.held++;
      return true;
    }
    k.waiting.push({ runId, begin });
    return false;
  }

  /** A run holding a slot of `key` ended: the slot goes to the next start waiting, if any. */
  leave(key: string): void {
    const k = this.keys.get(key);
    if (k === undefined) return;
    const next = k.waiting.shift();
    if (next !== undefined) next.begin();
    else if (--k.held === 0) this.keys.delete(key);
  }

  /** Takes a start out of the queue (it was cancelled); false when it was not waiting. */
  drop(runId: string): boolean {
    for (const k of this.keys.values()) {
      const at = k.waiting.findIndex((w) => w.runId === runId);
      if (at >= 0) {
        k.waiting.splice(at, 1);
        return true;
      }
    }
    return false;
  }
}

import type { WaitingStep } from './run-record.js';

/**
 * The steps of one run that wait for a signal, by signal name, with the timers of those that
 * have a deadline. A deadline that has already passed (a run restored after it) expires at once.
 */
export class StepWaits {
  private readonly bySignal = new Map<string, WaitingStep>();
  private readonly timers = new Map<string, NodeJS.Timeout>();

  /** @param expire called when a wait's deadline passes; the wait is already removed. */
  constructor(private readonly expire: (wait: WaitingStep) => void) {}

  get size(): number {
    return this.bySignal.size;
  }

  values(): WaitingStep[] {
    return [...this.bySignal.values()];
  }

  has(signal: string): boolean {
    return this.bySignal.has(signal);
  }

  /** Registers a wait and arms its deadline. */
  add(wait: WaitingStep): void {
    this.bySignal.set(wait.signal, wait);
    if (wait.deadline === undefined) return;
    const remaining = wait.deadline - Date.now();
    if (remaining <= 0) this.fire(wait);
    else
      this.timers.set(
        wait.signal,
        setTimeout(() => this.fire(wait), remaining),
      );
  }

  /** Removes and returns the wait for `signal`. */
  take(signal: string): WaitingStep | undefined {
    const wait = this.bySignal.get(signal);
    if (wait !== undefined) this.remove(wait);
    return wait;
  }

  /** Removes the waits of `step`; true when there was one. */
  dropStep(step: string): boolean {
    let dropped = false;
    for (const w of this.values()) {
      if (w.step === step) {
        this.remove(w);
        dropped = true;
      }
    }
    return dropped;
  }

  /** Stops the timers (the waits stay registered, as a stored run keeps them). */
  release(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private fire(wait: WaitingStep): void {
    this.remove(wait);
    this.expire(wait);
  }

  private remove(wait: WaitingStep): void {
    this.bySignal.delete(wait.signal);
    const t = this.timers.get(wait.signal);
    if (t !== undefined) clearTimeout(t);
    this.timers.delete(wait.signal);
  }
}

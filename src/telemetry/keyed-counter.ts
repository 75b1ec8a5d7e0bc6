import type { Attributes, Meter, ObservableResult } from '@opentelemetry/api';
import { BoundSets } from './bound-sets.js';

/** One attribute set's count. */
interface Count {
  readonly attributes: Attributes;
  value: number;
}

/**
 * A monotonic counter whose counts Dirigent keeps itself, one per attribute set, bound to the
 * strings the set is made of (see {@link BoundSets}); the SDK reads them through an observable
 * counter when a reader collects. What a reader exports is what the SDK's own counter would give
 * (a monotonic cumulative sum per attribute set), but an add costs a few map lookups, where the
 * SDK's counter hashes the attribute set on every add (sorting its keys, serializing it). Sets are
 * kept for the life of the process, as the SDK keeps a cumulative counter's; their number is
 * bounded by the project's directives, steps, tools and error codes.
 */
export class KeyedCounter {
  private readonly counts = new BoundSets<Count>();

  constructor(meter: Meter, name: string, description: string) {
    meter
      .createObservableCounter(name, { description })
      .addCallback((result) => this.observe(result));
  }

  /**
   * Adds one to the count of the set the parts are bound to; false, adding nothing, when they are
   * bound to none yet (see {@link bind}).
   */
  add(a: string, b?: string, c?: string, d?: string): boolean {
    const count = this.counts.get(a, b, c, d);
    if (count === undefined) return false;
    count.value++;
    return true;
  }

  /** Binds the parts to their attribute set, with a first count of one. */
  bind(attributes: Attributes, a: string, b?: string, c?: string, d?: string): void {
    this.counts.set({ attributes, value: 1 }, a, b, c, d);
  }

  private observe(result: ObservableResult): void {
    for (const c of this.counts.values()) result.observe(c.value, c.attributes);
  }
}

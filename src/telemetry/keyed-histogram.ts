import type { Attributes, Histogram, Meter } from '@opentelemetry/api';
import { DURATION_BUCKETS_S } from './attributes.js';
import { BoundSets } from './bound-sets.js';

/**
 * A duration histogram (seconds, Dirigent's buckets) whose attribute sets are bound to the strings
 * they are made of (see {@link BoundSets}): every record of a set hands the SDK the same attribute
 * object, made the first time (see keyed-counter.ts for the counters' side).
 */
export class KeyedHistogram {
  private readonly histogram: Histogram;
  private readonly sets = new BoundSets<Attributes>();

  constructor(meter: Meter, name: string, description: string) {
    this.histogram = meter.createHistogram(name, {
      description,
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
    });
  }

  /**
   * Records `ms` milliseconds under the set the parts are bound to; false, recording nothing,
   * when they are bound to none yet (see {@link bind}).
   */
  record(ms: number, a: string, b?: string, c?: string): boolean {
    const set = this.sets.get(a, b, c);
    if (set === undefined) return false;
    this.histogram.record(Math.max(0, ms) / 1000, set);
    return true;
  }

  /** Binds the parts to their attribute set, and records `ms` milliseconds under it. */
  bind(attributes: Attributes, ms: number, a: string, b?: string, c?: string): void {
    this.sets.set(attributes, a, b, c);
    this.histogram.record(Math.max(0, ms) / 1000, attributes);
  }
}

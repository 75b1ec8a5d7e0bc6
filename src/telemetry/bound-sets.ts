/**
 * Values bound to up to four strings (a directive, a step, an outcome, an error code), found
 * through nested maps: a lookup joins no key, and strings the caller keeps (a directive's id, a
 * step's name, a constant) keep the hash V8 computed for them the first time. A missing part is
 * the empty string.
 */
export class BoundSets<T> {
  private readonly root = new Map<string, Map<string, Map<string, Map<string, T>>>>();

  /** The value bound to the parts, if any. */
  get(a: string, b = '', c = '', d = ''): T | undefined {
    return this.root.get(a)?.get(b)?.get(c)?.get(d);
  }

  /** Binds `value` to the parts. */
  set(value: T, a: string, b = '', c = '', d = ''): void {
    let m1 = this.root.get(a);
    if (m1 === undefined) this.root.set(a, (m1 = new Map()));
    let m2 = m1.get(b);
    if (m2 === undefined) m1.set(b, (m2 = new Map()));
    let m3 = m2.get(c);
    if (m3 === undefined) m2.set(c, (m3 = new Map()));
    m3.set(d, value);
  }

  /** Every value bound. */
  *values(): IterableIterator<T> {
    for (const m1 of this.root.values())
      for (const m2 of m1.values()) for (const m3 of m2.values()) yield* m3.values();
  }
}

/**
 * Growing the typed arrays of the search index, which are sized ahead and replaced by larger
 * copies when full.
 */

/** A copy of `array` with room for at least `size` entries (and at least twice as many). */
export function grown<T extends Int32Array | Uint32Array | Uint8Array>(array: T, size: number): T {
  const copy = new (array.constructor as new (n: number) => T)(Math.max(size, array.length * 2, 4));
  copy.set(array);
  return copy;
}

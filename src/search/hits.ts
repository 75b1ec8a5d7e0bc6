/**
 * A set of matched documents with their scores, as the query evaluator passes them from one node
 * of a query to the next.
 */

/**
 * Matched documents: the first `size` entries of each array are their numbers, scores and the
 * query words each matched (one bit per word). Valid until the next query of the same
 * `IndexQuery`, which reuses the arrays.
 */
export class Hits {
  readonly docs: Int32Array;
  readonly scores: Float64Array;
  readonly words: Int32Array;
  size = 0;

  constructor(capacity: number) {
    this.docs = new Int32Array(capacity);
    this.scores = new Float64Array(capacity);
    this.words = new Int32Array(capacity);
  }
}

/** Keeps the entries of `hits` whose document passes `test`, in place. */
export function keepHits(hits: Hits, test: (doc: number) => boolean): Hits {
  const { docs, scores, words, size } = hits;
  let n = 0;
  for (let i = 0; i < size; i++) {
    const d = docs[i]!;
    if (!test(d)) continue;
    docs[n] = d;
    scores[n] = scores[i]!;
    words[n++] = words[i]!;
  }
  hits.size = n;
  return hits;
}

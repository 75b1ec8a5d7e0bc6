/**
 * The scoring of item search, as MiniSearch's (which the index used before): BM25+ with k 1.2,
 * b 0.7 and d 0.5 per field, times the field's weight in {@link FIELD_BOOSTS}; a document's total
 * is multiplied by how many different words of the query it matched (see {@link finalScore}).
 */
import { FIELD_BOOSTS, SEARCH_FIELDS } from './search-fields.js';
import type { TermIndex } from './term-index.js';

/** BM25's k: how soon more matches of a word stop adding to the score. */
export const K = 1.2;
/** BM25's b: how much a field's length (against the average) lowers the score. */
export const B = 0.7;
/** BM25+'s d: what any match scores, however long the field. */
export const D = 0.5;
/** The part of the denominator that does not depend on the field's length. */
export const FLAT = K * (1 - B);
/** The boost of each field, by field number. */
const BOOSTS = Float64Array.from(SEARCH_FIELDS, (f) => FIELD_BOOSTS[f]);

/**
 * What scoring the documents of postings list `slot` of `index` (in field `f`, each match
 * counting `weight`) needs: the factor of the whole (weight × field boost × idf), the factor of a
 * document's field length, and the field lengths. A match of a word `tf` times in document `d`
 * then scores `boost * (D + (tf * (K + 1)) / (tf + FLAT + perWord * length[d]))`.
 */
export function bm25(
  index: TermIndex,
  slot: number,
  f: number,
  weight: number,
): [boost: number, perWord: number, length: Uint32Array] {
  const { lengths, lengthSums, liveCount } = index;
  const live = index.postings.listLive[slot]!;
  const idf = Math.log(1 + (liveCount - live + 0.5) / (live + 0.5));
  return [weight * BOOSTS[f]! * idf, (K * B * liveCount) / lengthSums[f]!, lengths[f]!];
}

/** A document's final score: its score times the number of query words it matched (at least 1). */
export function finalScore(score: number, words: number): number {
  let x = words - ((words >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  const count = Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
  return score * (count || 1);
}

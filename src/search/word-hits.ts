/**
 * The documents with a word of a query, scored: the word itself, and the words it stands for by
 * prefix or by typo. A word found by prefix counts 0.375 × n / (n + 0.3 d) and one found by typo
 * 0.45 × n / (n + d) (n the length of the word found, d how many characters it adds or how many
 * edits away it is).
 */
import { bm25, D, FLAT, K } from './bm25.js';
import type { Hits } from './hits.js';
import type { QueryScratch } from './query-scratch.js';
import { fuzzyDistance } from './search-words.js';
import { FIELD_COUNT } from './term-index.js';

const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;

/** How a query word is matched: as written, as the start of longer words, or with typos. */
export type WordMatch = 'exact' | 'prefix' | 'fuzzy';

/** The documents with `word` (or the words it stands for) in one of `fields`, scored. */
export function wordHits(
  scratch: QueryScratch,
  word: string,
  fields: readonly number[],
  match: WordMatch,
): Hits {
  const index = scratch.index;
  const epoch = scratch.nextEpoch();
  let n = 0;
  const exact = index.terms.get(word);
  if (exact !== undefined) n = accumulate(scratch, exact, 1, fields, epoch, n);
  if (match === 'prefix') {
    for (const [term, id] of index.dictionary.atPrefix(word)) {
      const distance = term.length - word.length;
      if (distance > 0)
        n = accumulate(
          scratch,
          id,
          (PREFIX_WEIGHT * term.length) / (term.length + 0.3 * distance),
          fields,
          epoch,
          n,
        );
    }
  } else if (match === 'fuzzy') {
    for (const [term, [id, distance]] of index.dictionary.fuzzyGet(word, fuzzyDistance(word)))
      if (distance > 0)
        n = accumulate(
          scratch,
          id,
          (FUZZY_WEIGHT * term.length) / (term.length + distance),
          fields,
          epoch,
          n,
        );
  }
  const { touched, acc } = scratch;
  const bit = scratch.bitOf(word);
  const out = scratch.take();
  for (let i = 0; i < n; i++) {
    const d = touched[i]!;
    out.docs[i] = d;
    out.scores[i] = acc[d]!;
    out.words[i] = bit;
  }
  out.size = n;
  return out;
}

/**
 * Adds the scores of `term` in `fields` (each match counting `weight`) to the accumulator,
 * the documents it touches first (those not marked with `epoch`) to `touched` from `n`;
 * returns how many `touched` has then.
 */
function accumulate(
  scratch: QueryScratch,
  term: number,
  weight: number,
  fields: readonly number[],
  epoch: number,
  n: number,
): number {
  const index = scratch.index;
  const { alive } = index;
  const { entryDoc, entryEnd } = index.postings;
  const { stamps, acc, touched } = scratch;
  for (const f of fields) {
    const slot = term * FIELD_COUNT + f;
    if (index.postings.listLive[slot] === 0) continue;
    const [boost, perWord, length] = bm25(index, slot, f, weight);
    const from = index.postings.listStart[slot]!;
    const to = from + index.postings.listCount[slot]!;
    let end = 0;
    for (let e = from; e < to; e++) {
      const doc = entryDoc[e]!;
      const tf = entryEnd[e]! - end;
      end = entryEnd[e]!;
      if (alive[doc] === 0) continue;
      const score = boost * (D + (tf * (K + 1)) / (tf + FLAT + perWord * length[doc]!));
      if (stamps[doc] !== epoch) {
        stamps[doc] = epoch;
        acc[doc] = score;
        touched[n++] = doc;
      } else acc[doc] = acc[doc]! + score;
    }
  }
  return n;
}

/**
 * The documents with a phrase of two words or more, scored as its words together.
 */
import { bm25, D, FLAT, K } from './bm25.js';
import type { Hits } from './hits.js';
import type { QueryScratch } from './query-scratch.js';
import { backwards, phraseAt } from './search-words.js';
import { FIELD_COUNT } from './term-index.js';

/**
 * The documents where some value of one of `fields` contains `wanted`, a phrase of two words
 * or more, each of which they also have (as a word, in one of `fields`), scored as the words
 * together. Where `wanted` occurs, the words of the text are its words in a row, except that
 * the first may be the end of a longer word and the last the beginning of one: so the
 * positions of the rarest of them are read in the postings, the words next to each checked
 * there too, any others in the stream, and where they all fit the text is compared; then the
 * postings of the words are read for the few documents found.
 */
export function phraseHits(
  scratch: QueryScratch,
  words: readonly string[],
  wanted: string,
  fields: readonly number[],
): Hits {
  const index = scratch.index;
  const n = words.length;
  // The terms each word of the phrase may be where it occurs.
  const slots: number[][] = words.map((w, i) => {
    if (i === 0) return [...index.backwards.atPrefix(backwards(w)).values()];
    if (i === n - 1) return [...index.dictionary.atPrefix(w).values()];
    const term = index.terms.get(w);
    return term === undefined ? [] : [term];
  });
  const occurrences = (terms: number[]) => {
    let total = 0;
    for (const t of terms)
      for (const f of fields) {
        const slot = t * FIELD_COUNT + f;
        const count = index.postings.listCount[slot]!;
        if (count > 0)
          total += index.postings.entryEnd[index.postings.listStart[slot]! + count - 1]!;
      }
    return total;
  };
  let rarest = 0;
  let fewest = Infinity;
  slots.forEach((terms, i) => {
    const count = occurrences(terms);
    if (count < fewest) [rarest, fewest] = [i, count];
  });
  const termEpoch = scratch.nextEpoch();
  const { termStamps, termStamps2 } = scratch;
  for (const t of slots[0]!) termStamps[t] = termEpoch;
  for (const t of slots[n - 1]!) termStamps2[t] = termEpoch;
  const middle = Int32Array.from(slots.slice(1, -1), (terms) => terms[0] ?? -2);
  /** Whether `term` may be word `i` of the phrase where it occurs. */
  const fits = (i: number, term: number): boolean =>
    term >= 0 &&
    (i === 0
      ? termStamps[term] === termEpoch
      : i === n - 1
        ? termStamps2[term] === termEpoch
        : term === middle[i - 1]);
  const first = words[0]!.length;
  const lead = wanted.indexOf(words[0]!);

  // The documents with the phrase, in `touched`, marked with `epoch`.
  const epoch = scratch.nextEpoch();
  const { stamps, touched, counts, acc, accWords } = scratch;
  const { alive, stream, offsets, values } = index;
  const { entryDoc, entryEnd, posAt, posBefore, posAfter } = index.postings;
  let found = 0;
  for (const term of slots[rarest]!) {
    for (const f of fields) {
      const slot = term * FIELD_COUNT + f;
      const from = index.postings.listStart[slot]!;
      const to = from + index.postings.listCount[slot]!;
      const base = index.postings.listPos[slot]!;
      let end = base;
      for (let e = from; e < to; e++) {
        const d = entryDoc[e]!;
        const begin = end;
        end = base + entryEnd[e]!;
        if (alive[d] === 0 || stamps[d] === epoch) continue;
        for (let j = begin; j < end; j++) {
          // Whether the phrase is there with its word `rarest` at `posAt[j]`: the words next
          // to it first (kept in the postings), then any others (in the stream), then the text.
          if (rarest > 0 && !fits(rarest - 1, posBefore[j]!)) continue;
          if (rarest < n - 1 && !fits(rarest + 1, posAfter[j]!)) continue;
          const start = posAt[j]! - rarest;
          let all = true;
          for (let k = 0; k < n && all; k++)
            if (k < rarest - 1 || k > rarest + 1) all = fits(k, stream[start + k]!);
          if (!all) continue;
          const head = stream[start]!;
          const text = values[index.valueAt(d, start)]!;
          if (phraseAt(text, offsets[start]! + index.words[head]!.length - first, wanted, lead)) {
            stamps[d] = epoch;
            touched[found++] = d;
            counts[d] = 0;
            acc[d] = 0;
            accWords[d] = 0;
            break;
          }
        }
      }
    }
  }

  // Each word's score in them, `counts` telling how many of the words (in order) each has.
  // When they are few next to a postings list, each is looked for in it (the list and they
  // are in the order of the documents: a search from where the last one was); else the
  // list is read through.
  const docs = touched.subarray(0, found).sort();
  const out = scratch.take();
  for (let k = 0; k < n && found > 0; k++) {
    const term = index.terms.get(words[k]!);
    if (term === undefined) return out;
    const bit = scratch.bitOf(words[k]!);
    for (const f of fields) {
      const slot = term * FIELD_COUNT + f;
      if (index.postings.listLive[slot] === 0) continue;
      const [boost, perWord, length] = bm25(index, slot, f, 1);
      const from = index.postings.listStart[slot]!;
      const to = from + index.postings.listCount[slot]!;
      const score = (e: number, d: number) => {
        if (counts[d] === k) counts[d] = k + 1;
        else if (counts[d] !== k + 1) return;
        const tf = entryEnd[e]! - (e === from ? 0 : entryEnd[e - 1]!);
        acc[d] = acc[d]! + boost * (D + (tf * (K + 1)) / (tf + FLAT + perWord * length[d]!));
        accWords[d]! |= bit;
      };
      if (found * 16 < to - from) {
        let e = from;
        for (let i = 0; i < found && e < to; i++) {
          const d = docs[i]!;
          if (entryDoc[e]! < d) {
            // Gallop: entryDoc[lo] < d, and entryDoc[hi] >= d or hi is the end.
            let lo = e;
            let hi = e + 1;
            for (let step = 1; hi < to && entryDoc[hi]! < d; step *= 2) [lo, hi] = [hi, hi + step];
            if (hi > to) hi = to;
            while (hi - lo > 1) {
              const mid = (lo + hi) >> 1;
              if (entryDoc[mid]! < d) lo = mid;
              else hi = mid;
            }
            e = hi;
          }
          if (e < to && entryDoc[e] === d) score(e, d);
        }
      } else {
        for (let e = from; e < to; e++) {
          const d = entryDoc[e]!;
          if (stamps[d] === epoch) score(e, d);
        }
      }
    }
  }
  let size = 0;
  for (let i = 0; i < found; i++) {
    const d = touched[i]!;
    if (counts[d] !== n) continue;
    out.docs[size] = d;
    out.scores[size] = acc[d]!;
    out.words[size++] = accWords[d]!;
  }
  out.size = size;
  return out;
}

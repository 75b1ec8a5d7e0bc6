/**
 * Runs a parsed query on a {@link TermIndex}: each word is looked up (with the words it stands
 * for by prefix or by typo), its postings scored with BM25+ into a dense accumulator over the
 * document numbers, and the nodes of the query combined as sets of document numbers.
 *
 * Scores follow MiniSearch's (which the index used before): BM25+ with k 1.2, b 0.7 and d 0.5
 * per field, times the field's weight in {@link FIELD_BOOSTS}; a word found by prefix counts
 * 0.375 × n / (n + 0.3 d) and one found by typo 0.45 × n / (n + d) (n the length of the word
 * found, d how many characters it adds or how many edits away it is); `and` and `or` add their
 * children's scores up; and a document's total is multiplied by how many different words of the
 * query it matched (see {@link finalScore}). `not` and `*` score nothing.
 */
import type { QueryNode } from './query-node.js';
import { FIELD_BOOSTS, SEARCH_FIELDS } from './search-fields.js';
import { fuzzyDistance, phraseAt, phraseText } from './search-words.js';
import { FIELD_COUNT, TermIndex, backwards } from './term-index.js';

/**
 * Matched documents: the first `size` entries of each array are their numbers, scores and the
 * query words each matched (one bit per word). Valid until the next query of the same
 * {@link IndexQuery}, which reuses the arrays.
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

/** How many sets a pool starts with (a query of a few words needs no more). */
const POOL = 6;

const K = 1.2;
const B = 0.7;
const D = 0.5;
const FLAT = K * (1 - B);
const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;
const BOOSTS = Float64Array.from(SEARCH_FIELDS, (f) => FIELD_BOOSTS[f]);
const ALL_FIELDS: readonly number[] = SEARCH_FIELDS.map((_, f) => f);

type WordMatch = 'exact' | 'prefix' | 'fuzzy';

/** A document's final score: its score times the number of query words it matched (at least 1). */
export function finalScore(score: number, words: number): number {
  let x = words - ((words >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  const count = Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
  return score * (count || 1);
}

/**
 * Query evaluation over one {@link TermIndex}, with scratch arrays (sized to its document and
 * term numbers) kept from one query to the next: each operation marks what it touches with a
 * new epoch, so nothing needs clearing, and the sets of each query are taken from a pool that
 * the next query reuses, so a query allocates next to nothing.
 */
export class IndexQuery {
  private stamps = new Int32Array(0);
  private counts = new Int32Array(0);
  private acc = new Float64Array(0);
  private accWords = new Int32Array(0);
  private touched = new Int32Array(0);
  private termStamps = new Int32Array(0);
  private termStamps2 = new Int32Array(0);
  private epoch = 0;
  private readonly wordBits = new Map<string, number>();
  private pool: Hits[] = [];
  private used = 0;

  constructor(private readonly index: TermIndex) {
    this.prepare();
  }

  /** The documents matching `tree` (valid until the next call). */
  run(tree: QueryNode): Hits {
    if (this.stamps.length < this.index.ids.length) this.prepare();
    this.wordBits.clear();
    this.used = 0;
    return this.node(tree);
  }

  private node(node: QueryNode): Hits {
    switch (node.type) {
      case 'all':
        return this.all();
      case 'not':
        return this.without(this.all(), [this.node(node.child)]);
      case 'or':
        return this.union(node.children.map((c) => this.node(c)));
      case 'and': {
        const wanted: Hits[] = [];
        const unwanted: Hits[] = [];
        for (const child of node.children) {
          if (child.type === 'not') unwanted.push(this.node(child.child));
          else wanted.push(this.node(child));
        }
        const base = wanted.length === 0 ? this.all() : this.intersection(wanted);
        return unwanted.length === 0 ? base : this.without(base, unwanted);
      }
      case 'term': {
        const fields = fieldsOf(node.field);
        const last = node.words.length - 1;
        return this.intersection(
          node.words.map((w, i) =>
            this.word(
              w,
              fields,
              node.prefix && i === last ? 'prefix' : fuzzyDistance(w) > 0 ? 'fuzzy' : 'exact',
            ),
          ),
        );
      }
      case 'phrase': {
        const fields = fieldsOf(node.field);
        const wanted = phraseText(node.text);
        if (node.words.length > 1) return this.phrase(node.words, wanted, fields);
        // One word: the documents with it, and when the phrase has more than the word
        // (`"(old"`), those whose text has that.
        const found = this.word(node.words[0]!, fields, 'exact');
        if (found.size === 0 || wanted === node.words[0]) return found;
        return this.keep(found, (d) =>
          fields.some((f) => this.index.phrases(d, f).some((text) => text.includes(wanted))),
        );
      }
    }
  }

  /** Every live document, scoring nothing. */
  private all(): Hits {
    const { alive, ids } = this.index;
    const out = this.take();
    let n = 0;
    for (let d = 0; d < ids.length; d++) {
      if (alive[d] === 0) continue;
      out.docs[n] = d;
      out.scores[n] = 0;
      out.words[n++] = 0;
    }
    out.size = n;
    return out;
  }

  /** The documents with `word` (or the words it stands for) in one of `fields`, scored. */
  private word(word: string, fields: readonly number[], match: WordMatch): Hits {
    const index = this.index;
    const epoch = this.nextEpoch();
    let n = 0;
    const exact = index.terms.get(word);
    if (exact !== undefined) n = this.accumulate(exact, 1, fields, epoch, n);
    if (match === 'prefix') {
      for (const [term, id] of index.dictionary.atPrefix(word)) {
        const distance = term.length - word.length;
        if (distance > 0)
          n = this.accumulate(
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
          n = this.accumulate(
            id,
            (FUZZY_WEIGHT * term.length) / (term.length + distance),
            fields,
            epoch,
            n,
          );
    }
    const { touched, acc } = this;
    const bit = this.bitOf(word);
    const out = this.take();
    for (let i = 0; i < n; i++) {
      const d = touched[i]!;
      out.docs[i] = d;
      out.scores[i] = acc[d]!;
      out.words[i] = bit;
    }
    out.size = n;
    return out;
  }

  /** The documents in every one of `sets`, their scores added up. */
  private intersection(sets: Hits[]): Hits {
    if (sets.length === 1) return sets[0]!;
    let smallest = sets[0]!;
    for (const s of sets) if (s.size < smallest.size) smallest = s;
    if (smallest.size === 0) return smallest;
    const epoch = this.nextEpoch();
    const { stamps, counts, acc, accWords } = this;
    for (let i = 0; i < smallest.size; i++) {
      const d = smallest.docs[i]!;
      stamps[d] = epoch;
      counts[d] = 0;
      acc[d] = 0;
      accWords[d] = 0;
    }
    for (const { docs, scores, words, size } of sets) {
      for (let i = 0; i < size; i++) {
        const d = docs[i]!;
        if (stamps[d] !== epoch) continue;
        counts[d]!++;
        acc[d] = acc[d]! + scores[i]!;
        accWords[d]! |= words[i]!;
      }
    }
    const out = this.take();
    let n = 0;
    for (let i = 0; i < smallest.size; i++) {
      const d = smallest.docs[i]!;
      if (counts[d] !== sets.length) continue;
      out.docs[n] = d;
      out.scores[n] = acc[d]!;
      out.words[n++] = accWords[d]!;
    }
    out.size = n;
    return out;
  }

  /** The documents in any of `sets`, their scores added up. */
  private union(sets: Hits[]): Hits {
    const epoch = this.nextEpoch();
    const { stamps, acc, accWords, touched } = this;
    let n = 0;
    for (const { docs, scores, words, size } of sets) {
      for (let i = 0; i < size; i++) {
        const d = docs[i]!;
        if (stamps[d] !== epoch) {
          stamps[d] = epoch;
          acc[d] = scores[i]!;
          accWords[d] = words[i]!;
          touched[n++] = d;
        } else {
          acc[d] = acc[d]! + scores[i]!;
          accWords[d]! |= words[i]!;
        }
      }
    }
    const out = this.take();
    for (let i = 0; i < n; i++) {
      const d = touched[i]!;
      out.docs[i] = d;
      out.scores[i] = acc[d]!;
      out.words[i] = accWords[d]!;
    }
    out.size = n;
    return out;
  }

  /** The documents of `base` in none of `unwanted` (`base` itself, made smaller). */
  private without(base: Hits, unwanted: Hits[]): Hits {
    const epoch = this.nextEpoch();
    const stamps = this.stamps;
    for (const { docs, size } of unwanted) for (let i = 0; i < size; i++) stamps[docs[i]!] = epoch;
    return this.keep(base, (d) => stamps[d] !== epoch);
  }

  /**
   * The documents where some value of one of `fields` contains `wanted`, a phrase of two words
   * or more, each of which they also have (as a word, in one of `fields`), scored as the words
   * together. Where `wanted` occurs, the words of the text are its words in a row, except that
   * the first may be the end of a longer word and the last the beginning of one: so the
   * positions of the rarest of them are read in the postings, the words next to each checked
   * there too, any others in the stream, and where they all fit the text is compared; then the
   * postings of the words are read for the few documents found.
   */
  private phrase(words: readonly string[], wanted: string, fields: readonly number[]): Hits {
    const index = this.index;
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
          const count = index.listCount[slot]!;
          if (count > 0) total += index.entryEnd[index.listStart[slot]! + count - 1]!;
        }
      return total;
    };
    let rarest = 0;
    let fewest = Infinity;
    slots.forEach((terms, i) => {
      const count = occurrences(terms);
      if (count < fewest) [rarest, fewest] = [i, count];
    });
    const termEpoch = this.nextEpoch();
    const { termStamps, termStamps2 } = this;
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
    const epoch = this.nextEpoch();
    const { stamps, touched, counts, acc, accWords } = this;
    const { alive, stream, offsets, values, entryDoc, entryEnd } = index;
    const { posAt, posBefore, posAfter } = index;
    let found = 0;
    for (const term of slots[rarest]!) {
      for (const f of fields) {
        const slot = term * FIELD_COUNT + f;
        const from = index.listStart[slot]!;
        const to = from + index.listCount[slot]!;
        const base = index.listPos[slot]!;
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
    const out = this.take();
    for (let k = 0; k < n && found > 0; k++) {
      const term = index.terms.get(words[k]!);
      if (term === undefined) return out;
      const bit = this.bitOf(words[k]!);
      for (const f of fields) {
        const slot = term * FIELD_COUNT + f;
        if (index.listLive[slot] === 0) continue;
        const [boost, perWord, length] = this.bm25(slot, f, 1);
        const from = index.listStart[slot]!;
        const to = from + index.listCount[slot]!;
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
              for (let step = 1; hi < to && entryDoc[hi]! < d; step *= 2)
                [lo, hi] = [hi, hi + step];
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

  /**
   * Adds the scores of `term` in `fields` (each match counting `weight`) to the accumulator,
   * the documents it touches first (those not marked with `epoch`) to `touched` from `n`;
   * returns how many `touched` has then.
   */
  private accumulate(
    term: number,
    weight: number,
    fields: readonly number[],
    epoch: number,
    n: number,
  ): number {
    const index = this.index;
    const { entryDoc, entryEnd, alive } = index;
    const { stamps, acc, touched } = this;
    for (const f of fields) {
      const slot = term * FIELD_COUNT + f;
      if (index.listLive[slot] === 0) continue;
      const [boost, perWord, length] = this.bm25(slot, f, weight);
      const from = index.listStart[slot]!;
      const to = from + index.listCount[slot]!;
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

  /**
   * What scoring the documents of postings list `slot` (in field `f`, each match counting
   * `weight`) needs: the factor of the whole (weight × field boost × idf), the factor of a
   * document's field length, and the field lengths.
   */
  private bm25(slot: number, f: number, weight: number): [number, number, Uint32Array] {
    const { lengths, lengthSums, liveCount } = this.index;
    const live = this.index.listLive[slot]!;
    const idf = Math.log(1 + (liveCount - live + 0.5) / (live + 0.5));
    return [weight * BOOSTS[f]! * idf, (K * B * liveCount) / lengthSums[f]!, lengths[f]!];
  }

  /** Keeps the entries of `hits` whose document passes `test`, in place. */
  private keep(hits: Hits, test: (doc: number) => boolean): Hits {
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

  /** An empty set from the pool. */
  private take(): Hits {
    if (this.used === this.pool.length) this.pool.push(new Hits(this.stamps.length));
    const hits = this.pool[this.used++]!;
    hits.size = 0;
    return hits;
  }

  /** The bit of a query word (words past the 32nd share bits). */
  private bitOf(word: string): number {
    let bit = this.wordBits.get(word);
    if (bit === undefined) this.wordBits.set(word, (bit = 1 << this.wordBits.size % 32));
    return bit;
  }

  private nextEpoch(): number {
    if (this.epoch === 0x7fffffff) {
      this.stamps.fill(0);
      this.termStamps.fill(0);
      this.termStamps2.fill(0);
      this.epoch = 0;
    }
    return ++this.epoch;
  }

  /**
   * Sizes the scratch arrays and the pool to the index's document and term numbers: after the
   * index changed, before the next query (which then allocates next to nothing).
   */
  prepare(): void {
    const docs = this.index.ids.length;
    if (this.stamps.length < docs) {
      const size = Math.max(docs, this.stamps.length * 2, 64);
      this.stamps = new Int32Array(size);
      this.counts = new Int32Array(size);
      this.acc = new Float64Array(size);
      this.accWords = new Int32Array(size);
      this.touched = new Int32Array(size);
      this.pool = Array.from({ length: POOL }, () => new Hits(size));
      this.epoch = 0;
      this.termStamps.fill(0);
      this.termStamps2.fill(0);
    }
    const terms = this.index.words.length;
    if (this.termStamps.length < terms) {
      const size = Math.max(terms, this.termStamps.length * 2, 64);
      this.termStamps = new Int32Array(size);
      this.termStamps2 = new Int32Array(size);
      this.stamps.fill(0);
      this.epoch = 0;
    }
  }
}

function fieldsOf(field: string | undefined): readonly number[] {
  return field === undefined ? ALL_FIELDS : [SEARCH_FIELDS.indexOf(field as never)];
}

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
 * query it matched. `not` and `*` score nothing.
 */
import type { QueryNode } from './query-node.js';
import { FIELD_BOOSTS, SEARCH_FIELDS } from './search-fields.js';
import { fuzzyDistance, phraseText } from './search-words.js';
import { FIELD_COUNT, TermIndex, backwards } from './term-index.js';

/** Matched documents: their numbers, scores and the query words each matched (one bit each). */
export interface Hits {
  readonly docs: Int32Array;
  readonly scores: Float64Array;
  readonly words: Int32Array;
}

const K = 1.2;
const B = 0.7;
const D = 0.5;
const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;
const BOOSTS = Float64Array.from(SEARCH_FIELDS, (f) => FIELD_BOOSTS[f]);
const ALL_FIELDS: readonly number[] = SEARCH_FIELDS.map((_, f) => f);
/** Below this many candidates, a phrase is looked for in each candidate's text directly. */
const FEW_CANDIDATES = 32;

type WordMatch = 'exact' | 'prefix' | 'fuzzy';

/** The score a match counts towards the final one: times the number of query words matched. */
export function finalScore(score: number, words: number): number {
  let x = words - ((words >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  const count = Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
  return score * (count || 1);
}

/**
 * Query evaluation over one {@link TermIndex}, with scratch arrays (sized to its document and
 * term numbers) kept from one query to the next. Each operation marks what it touches with a
 * new epoch, so nothing needs clearing between operations.
 */
export class IndexQuery {
  private stamps = new Int32Array(0);
  private counts = new Int32Array(0);
  private acc = new Float64Array(0);
  private accWords = new Int32Array(0);
  private touched = new Int32Array(0);
  private checked = new Uint8Array(0);
  private termStamps = new Int32Array(0);
  private termStamps2 = new Int32Array(0);
  private epoch = 0;
  private wordBits = new Map<string, number>();

  constructor(private readonly index: TermIndex) {}

  /** The documents matching `tree`. */
  run(tree: QueryNode): Hits {
    this.fit();
    this.wordBits = new Map();
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
        const found = this.intersection(node.words.map((w) => this.word(w, fields, 'exact')));
        const wanted = phraseText(node.text);
        if (found.docs.length === 0 || (node.words.length === 1 && wanted === node.words[0]))
          return found;
        return this.withPhrase(found, node.words, wanted, fields);
      }
    }
  }

  /** Every live document, scoring nothing. */
  private all(): Hits {
    const { alive, docs } = this.index;
    const found = new Int32Array(this.index.liveCount);
    let n = 0;
    for (let d = 0; d < docs.length; d++) if (alive[d] === 1) found[n++] = d;
    return { docs: found, scores: new Float64Array(n), words: new Int32Array(n) };
  }

  /** The documents with `word` (or the words it stands for) in one of `fields`, scored. */
  private word(word: string, fields: readonly number[], match: WordMatch): Hits {
    const index = this.index;
    const epoch = this.nextEpoch();
    let n = 0;
    const add = (term: number, weight: number) => {
      const { alive, lengths, lengthSums, liveCount } = index;
      const stamps = this.stamps;
      const acc = this.acc;
      const touched = this.touched;
      for (const f of fields) {
        const postings = index.postings[term * FIELD_COUNT + f];
        if (postings === undefined || postings.live === 0) continue;
        const { docs, tfs } = postings;
        const idf = Math.log(1 + (liveCount - postings.live + 0.5) / (postings.live + 0.5));
        const boost = weight * BOOSTS[f]! * idf;
        const flat = K * (1 - B);
        const perWord = (K * B * liveCount) / lengthSums[f]!;
        const length = lengths[f]!;
        for (let i = 0; i < docs.length; i++) {
          const doc = docs[i]!;
          if (alive[doc] === 0) continue;
          const tf = tfs[i]!;
          const score = boost * (D + (tf * (K + 1)) / (tf + flat + perWord * length[doc]!));
          if (stamps[doc] !== epoch) {
            stamps[doc] = epoch;
            acc[doc] = score;
            touched[n++] = doc;
          } else acc[doc] = acc[doc]! + score;
        }
      }
    };
    const exact = index.terms.get(word);
    if (exact !== undefined) add(exact, 1);
    if (match === 'prefix') {
      for (const [term, id] of index.dictionary.atPrefix(word)) {
        const distance = term.length - word.length;
        if (distance > 0) add(id, (PREFIX_WEIGHT * term.length) / (term.length + 0.3 * distance));
      }
    } else if (match === 'fuzzy') {
      for (const [term, [id, distance]] of index.dictionary.fuzzyGet(word, fuzzyDistance(word)))
        if (distance > 0) add(id, (FUZZY_WEIGHT * term.length) / (term.length + distance));
    }
    const bit = this.bitOf(word);
    const docs = this.touched.slice(0, n);
    const scores = new Float64Array(n);
    for (let i = 0; i < n; i++) scores[i] = this.acc[docs[i]!]!;
    return { docs, scores, words: new Int32Array(n).fill(bit) };
  }

  /** The documents in every one of `sets`, their scores added up. */
  private intersection(sets: Hits[]): Hits {
    if (sets.length === 1) return sets[0]!;
    let smallest = sets[0]!;
    for (const s of sets) if (s.docs.length < smallest.docs.length) smallest = s;
    if (smallest.docs.length === 0) return smallest;
    const epoch = this.nextEpoch();
    const { stamps, counts, acc, accWords } = this;
    for (const d of smallest.docs) {
      stamps[d] = epoch;
      counts[d] = 0;
      acc[d] = 0;
      accWords[d] = 0;
    }
    for (const s of sets) {
      const { docs, scores, words } = s;
      for (let i = 0; i < docs.length; i++) {
        const d = docs[i]!;
        if (stamps[d] !== epoch) continue;
        counts[d]!++;
        acc[d] = acc[d]! + scores[i]!;
        accWords[d]! |= words[i]!;
      }
    }
    return this.collect(smallest.docs, (d) => counts[d] === sets.length);
  }

  /** The documents in any of `sets`, their scores added up. */
  private union(sets: Hits[]): Hits {
    const epoch = this.nextEpoch();
    const { stamps, acc, accWords, touched } = this;
    let n = 0;
    for (const s of sets) {
      const { docs, scores, words } = s;
      for (let i = 0; i < docs.length; i++) {
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
    return this.collect(touched.subarray(0, n), () => true);
  }

  /** The documents of `base` in none of `unwanted`. */
  private without(base: Hits, unwanted: Hits[]): Hits {
    const epoch = this.nextEpoch();
    const stamps = this.stamps;
    for (const s of unwanted) for (const d of s.docs) stamps[d] = epoch;
    return this.filter(base, (d) => stamps[d] !== epoch);
  }

  /**
   * The documents of `found` (which have every word of the phrase) where some value of one of
   * `fields` contains `wanted`. Where `wanted` occurs, the words of the text are its words in a
   * row, except that the first may be the end of a longer word and the last the beginning of
   * one; so the positions of the rarest of them are read in the postings, the words around each
   * checked in the document's words, and only where they fit is the text itself compared.
   */
  private withPhrase(
    found: Hits,
    words: readonly string[],
    wanted: string,
    fields: readonly number[],
  ): Hits {
    const index = this.index;
    const contains = (doc: number, f: number) =>
      index.phrases(doc, f).some((text) => text.includes(wanted));
    if (words.length === 1 || found.docs.length < FEW_CANDIDATES)
      return this.filter(found, (d) => fields.some((f) => contains(d, f)));

    // The terms each word of the phrase may be where it occurs.
    const n = words.length;
    const slots: number[][] = words.map((w, i) => {
      if (i === 0) return [...index.backwards.atPrefix(backwards(w)).values()];
      if (i === n - 1) return [...index.dictionary.atPrefix(w).values()];
      const term = index.terms.get(w);
      return term === undefined ? [] : [term];
    });
    const occurrences = (terms: number[]) => {
      let total = 0;
      for (const t of terms)
        for (const f of fields) total += index.postings[t * FIELD_COUNT + f]?.pos.length ?? 0;
      return total;
    };
    let rarest = 0;
    let fewest = Infinity;
    slots.forEach((terms, i) => {
      const count = occurrences(terms);
      if (count < fewest) [rarest, fewest] = [i, count];
    });
    const firstEpoch = this.nextEpoch();
    for (const t of slots[0]!) this.termStamps[t] = firstEpoch;
    for (const t of slots[n - 1]!) this.termStamps2[t] = firstEpoch;
    const middle = Int32Array.from(slots.slice(1, -1), (terms) => terms[0] ?? -2);

    const epoch = this.nextEpoch();
    const { stamps, counts, checked, termStamps, termStamps2 } = this;
    const CANDIDATE = 1;
    const FOUND = 2;
    for (const d of found.docs) {
      stamps[d] = epoch;
      counts[d] = CANDIDATE;
      checked[d] = 0;
    }
    const fits = (words: Int32Array, start: number): boolean => {
      if (start < 0 || start + n > words.length) return false;
      const first = words[start]!;
      const last = words[start + n - 1]!;
      if (first < 0 || termStamps[first] !== firstEpoch) return false;
      if (last < 0 || termStamps2[last] !== firstEpoch) return false;
      for (let i = 0; i < middle.length; i++) if (words[start + 1 + i] !== middle[i]) return false;
      return true;
    };
    for (const term of slots[rarest]!) {
      for (const f of fields) {
        const postings = index.postings[term * FIELD_COUNT + f];
        if (postings === undefined) continue;
        const { docs, tfs, at, pos } = postings;
        const bit = 1 << f;
        for (let i = 0; i < docs.length; i++) {
          const d = docs[i]!;
          if (stamps[d] !== epoch || counts[d] !== CANDIDATE || (checked[d]! & bit) !== 0) continue;
          const docWords = index.docs[d]!.words;
          for (let j = at[i]!, end = j + tfs[i]!; j < end; j++) {
            if (!fits(docWords, pos[j]! - rarest)) continue;
            checked[d]! |= bit;
            if (contains(d, f)) counts[d] = FOUND;
            break;
          }
        }
      }
    }
    return this.filter(found, (d) => counts[d] === FOUND);
  }

  /** The entries of `hits` whose document passes `keep`. */
  private filter(hits: Hits, keep: (doc: number) => boolean): Hits {
    const { docs, scores, words } = hits;
    const kept: number[] = [];
    for (let i = 0; i < docs.length; i++) if (keep(docs[i]!)) kept.push(i);
    if (kept.length === docs.length) return hits;
    return {
      docs: Int32Array.from(kept, (i) => docs[i]!),
      scores: Float64Array.from(kept, (i) => scores[i]!),
      words: Int32Array.from(kept, (i) => words[i]!),
    };
  }

  /** The documents of `docs` that pass `keep`, with the scores and words accumulated. */
  private collect(docs: Int32Array, keep: (doc: number) => boolean): Hits {
    const out = new Int32Array(docs.length);
    let n = 0;
    for (const d of docs) if (keep(d)) out[n++] = d;
    const found = out.slice(0, n);
    const scores = new Float64Array(n);
    const words = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      scores[i] = this.acc[found[i]!]!;
      words[i] = this.accWords[found[i]!]!;
    }
    return { docs: found, scores, words };
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

  /** Sizes the scratch arrays to the index's document and term numbers. */
  private fit(): void {
    const docs = this.index.docs.length;
    if (this.stamps.length < docs) {
      const size = Math.max(docs, this.stamps.length * 2, 64);
      this.stamps = new Int32Array(size);
      this.counts = new Int32Array(size);
      this.acc = new Float64Array(size);
      this.accWords = new Int32Array(size);
      this.touched = new Int32Array(size);
      this.checked = new Uint8Array(size);
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

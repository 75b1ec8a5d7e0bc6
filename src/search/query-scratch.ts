/**
 * The scratch arrays of the queries over one {@link TermIndex}, sized to its document and term
 * numbers and kept from one query to the next: each operation marks what it touches with a new
 * epoch, so nothing needs clearing, and the sets of each query are taken from a pool that the
 * next query reuses, so a query allocates next to nothing.
 */
import { Hits } from './hits.js';
import type { TermIndex } from './term-index.js';

/** How many sets a pool starts with (a query of a few words needs no more). */
const POOL = 6;

/** Scratch space for the queries over `index` (see the module comment). */
export class QueryScratch {
  /** Per document: the epoch of the operation that last touched it. */
  stamps = new Int32Array(0);
  /** Per document: how many of an operation's sets (or a phrase's words) it is in. */
  counts = new Int32Array(0);
  /** Per document: its score so far in an operation. */
  acc = new Float64Array(0);
  /** Per document: the query words (one bit each) it matched so far in an operation. */
  accWords = new Int32Array(0);
  /** The documents an operation touched, in the order it did. */
  touched = new Int32Array(0);
  /** Per term: the epoch of the phrase whose first word it may be. */
  termStamps = new Int32Array(0);
  /** Per term: the epoch of the phrase whose last word it may be. */
  termStamps2 = new Int32Array(0);
  private epoch = 0;
  /** The bit of each word of the current query. */
  private readonly wordBits = new Map<string, number>();
  private pool: Hits[] = [];
  /** How many sets of the pool the current query has taken. */
  private used = 0;

  constructor(readonly index: TermIndex) {
    this.prepare();
  }

  /**
   * Readies the scratch for a new query: sized to the index as it is now, every set of the pool
   * and every word bit free again.
   */
  begin(): void {
    if (this.stamps.length < this.index.ids.length) this.prepare();
    this.wordBits.clear();
    this.used = 0;
  }

  /** An empty set from the pool. */
  take(): Hits {
    if (this.used === this.pool.length) this.pool.push(new Hits(this.stamps.length));
    const hits = this.pool[this.used++]!;
    hits.size = 0;
    return hits;
  }

  /** The bit of a query word (words past the 32nd share bits). */
  bitOf(word: string): number {
    let bit = this.wordBits.get(word);
    if (bit === undefined) this.wordBits.set(word, (bit = 1 << this.wordBits.size % 32));
    return bit;
  }

  /** A new epoch to mark what an operation touches (clearing the marks when the epochs run out). */
  nextEpoch(): number {
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

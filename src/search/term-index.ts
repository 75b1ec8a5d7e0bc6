/**
 * The inverted index under {@link ItemIndex}: a term dictionary, compact postings and the words
 * of each document, kept in arrays of numbers rather than in objects per match.
 *
 * - Terms are interned: each distinct word gets a number the first time it is seen. MiniSearch's
 *   `SearchableMap` (a radix tree) maps each word to its number for prefix and fuzzy lookups,
 *   and a second one maps each word written backwards, for the words that end a given way
 *   (phrases need those).
 * - Documents are numbered as they are added. Each keeps its words as term numbers, field after
 *   field (every field value followed by -1, so no two values run together), and where each
 *   field starts.
 * - The postings of a term in a field list the documents that have it (in increasing order),
 *   how often, and where (positions in the document's words), plus how many of those
 *   documents are still live.
 * - Each field's length in each document (its distinct words, as MiniSearch counts them) is in
 *   a typed array per field, with their sum over the live documents for the average.
 * - A removed document is only marked dead (a tombstone): its postings stay and are skipped
 *   when read, its terms' live counts and its field lengths are taken off the totals.
 */
import SearchableMap from 'minisearch/SearchableMap';
import type { CatalogItem } from '../items/item-catalog.js';
import { itemDate } from './item-filter.js';
import { SEARCH_FIELDS, fieldValues } from './search-fields.js';
import { phraseText, searchWords } from './search-words.js';

/** How many fields are indexed; field numbers are positions in {@link SEARCH_FIELDS}. */
export const FIELD_COUNT = SEARCH_FIELDS.length;

/** The postings of one term in one field. */
export interface Postings {
  /** Document numbers, increasing. */
  readonly docs: number[];
  /** How often the term occurs in each of those documents' field. */
  readonly tfs: number[];
  /** Where each document's positions start in {@link pos}. */
  readonly at: number[];
  /** Positions in the documents' words, `tfs[i]` of them from `at[i]` for `docs[i]`. */
  readonly pos: number[];
  /** How many of {@link docs} are live. */
  live: number;
}

/** A document of the index. */
export interface IndexedDoc {
  readonly id: string;
  /** The item; a new object with the same text replaces it in place (see `TermIndex.renew`). */
  item: CatalogItem;
  /** The item's date (see `itemDate`). */
  date: number;
  /** Term numbers of its words, field after field, each field value followed by -1. */
  readonly words: Int32Array;
  /** Where each field's words start in {@link words}, and (last) where they end. */
  readonly starts: Int32Array;
  /** Each field's values as phrases are compared with them, made when first needed. */
  phrases?: (readonly string[] | undefined)[];
}

export class TermIndex {
  /** Term numbers by word. */
  readonly terms = new Map<string, number>();
  /** Words by term number. */
  readonly words: string[] = [];
  /** Word to term number, for prefix and fuzzy lookups. */
  readonly dictionary = new SearchableMap<number>();
  /** Word written backwards to term number, for the words that end a given way. */
  readonly backwards = new SearchableMap<number>();
  /** Postings by `term * FIELD_COUNT + field`. */
  readonly postings: (Postings | undefined)[] = [];
  /** Documents by number (`undefined` once removed). */
  readonly docs: (IndexedDoc | undefined)[] = [];
  /** 1 for a live document number, 0 for a removed one. */
  alive = new Uint8Array(64);
  /** Each field's length (distinct words) by document number. */
  readonly lengths: Uint32Array[] = SEARCH_FIELDS.map(() => new Uint32Array(64));
  /** The sum of each field's length over the live documents. */
  readonly lengthSums = new Float64Array(FIELD_COUNT);
  /** Live documents. */
  liveCount = 0;
  /** Removed documents whose postings are still there. */
  deadCount = 0;

  private seen = new Int32Array(64);
  private seenEpoch = 0;
  private readonly scratch: number[] = [];

  /** Adds `item` under `id`; returns its document number. */
  add(id: string, item: CatalogItem): number {
    const num = this.docs.length;
    this.grow(num + 1);
    const scratch = this.scratch;
    scratch.length = 0;
    const starts = new Int32Array(FIELD_COUNT + 1);
    for (let f = 0; f < FIELD_COUNT; f++) {
      starts[f] = scratch.length;
      for (const value of fieldValues(item, SEARCH_FIELDS[f]!)) {
        for (const word of searchWords(value)) scratch.push(this.intern(word));
        scratch.push(-1);
      }
    }
    starts[FIELD_COUNT] = scratch.length;
    const doc: IndexedDoc = {
      id,
      item,
      date: itemDate(item),
      words: Int32Array.from(scratch),
      starts,
    };
    this.docs.push(doc);
    this.post(num, doc);
    return num;
  }

  /** Puts `item`, which has the same text as document `num`'s item, in its place. */
  renew(num: number, item: CatalogItem): void {
    const doc = this.docs[num]!;
    doc.item = item;
    doc.date = itemDate(item);
  }

  /** Marks document `num` removed: its postings stay, skipped, until the index is built again. */
  remove(num: number): void {
    const doc = this.docs[num];
    if (doc === undefined) return;
    this.alive[num] = 0;
    this.docs[num] = undefined;
    this.liveCount--;
    this.deadCount++;
    const { words, starts } = doc;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const epoch = this.nextSeen();
      for (let p = starts[f]!; p < starts[f + 1]!; p++) {
        const term = words[p]!;
        if (term < 0 || this.seen[term] === epoch) continue;
        this.seen[term] = epoch;
        this.postings[term * FIELD_COUNT + f]!.live--;
      }
      this.lengthSums[f] = this.lengthSums[f]! - this.lengths[f]![num]!;
    }
  }

  /** The phrase form of the values of field `f` of document `num` (see `phraseText`). */
  phrases(num: number, f: number): readonly string[] {
    const doc = this.docs[num]!;
    const all = (doc.phrases ??= []);
    return (all[f] ??= fieldValues(doc.item, SEARCH_FIELDS[f]!).map(phraseText));
  }

  /** The term number of `word`, given one if it is new. */
  private intern(word: string): number {
    let term = this.terms.get(word);
    if (term !== undefined) return term;
    term = this.words.length;
    this.words.push(word);
    this.terms.set(word, term);
    this.dictionary.set(word, term);
    this.backwards.set(backwards(word), term);
    for (let f = 0; f < FIELD_COUNT; f++) this.postings.push(undefined);
    if (term >= this.seen.length) {
      const seen = new Int32Array(this.seen.length * 2);
      seen.set(this.seen);
      this.seen = seen;
    }
    return term;
  }

  /** Adds document `num`'s words to the postings and its field lengths to the totals. */
  private post(num: number, doc: IndexedDoc): void {
    const { words, starts } = doc;
    const seen = this.seen;
    this.alive[num] = 1;
    this.liveCount++;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const epoch = this.nextSeen();
      let distinct = 0;
      for (let p = starts[f]!; p < starts[f + 1]!; p++) {
        const term = words[p]!;
        if (term < 0) continue;
        const slot = term * FIELD_COUNT + f;
        let postings = this.postings[slot];
        if (postings === undefined)
          this.postings[slot] = postings = { docs: [], tfs: [], at: [], pos: [], live: 0 };
        if (seen[term] !== epoch) {
          seen[term] = epoch;
          distinct++;
          postings.docs.push(num);
          postings.tfs.push(1);
          postings.at.push(postings.pos.length);
          postings.live++;
        } else postings.tfs[postings.tfs.length - 1]!++;
        postings.pos.push(p);
      }
      this.lengths[f]![num] = distinct;
      this.lengthSums[f] = this.lengthSums[f]! + distinct;
    }
  }

  private nextSeen(): number {
    if (this.seenEpoch === 0x7fffffff) {
      this.seen.fill(0);
      this.seenEpoch = 0;
    }
    return ++this.seenEpoch;
  }

  /** Makes room for `count` document numbers. */
  private grow(count: number): void {
    if (count <= this.alive.length) return;
    const size = Math.max(count, this.alive.length * 2);
    const alive = new Uint8Array(size);
    alive.set(this.alive);
    this.alive = alive;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const lengths = new Uint32Array(size);
      lengths.set(this.lengths[f]!);
      this.lengths[f] = lengths;
    }
  }
}

/** `word` written backwards (by code point). */
export function backwards(word: string): string {
  let out = '';
  for (const c of word) out = c + out;
  return out;
}

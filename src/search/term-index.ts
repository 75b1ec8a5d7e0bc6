/**
 * The inverted index under {@link ItemIndex}: a term dictionary, compact postings and the words
 * of each document, in a few large typed arrays rather than in objects per match or per word
 * (which also keeps the garbage collector's work small).
 *
 * - Terms are interned: each distinct word gets a number the first time it is seen. MiniSearch's
 *   `SearchableMap` (a radix tree) maps each word to its number for prefix and fuzzy lookups,
 *   and a second one maps each word written backwards, for the words that end a given way
 *   (phrases need those).
 * - Documents are numbered as they are added. Their words, as term numbers, go one after the
 *   other into one array, the stream (document after document, field after field, each field
 *   value followed by -1 so that no two values run together); beside it, where each word starts
 *   in its value and which value that is (values, lowercased, are numbered in the same order).
 *   Where each document's fields start in the stream is in one more array.
 * - The postings of a term in a field list the documents that have it (in increasing order),
 *   and for each the positions in the stream where it occurs with the words just before and
 *   after it there (so that a phrase is checked without leaving the postings), plus how many
 *   of those documents are still live. A build counts them first and puts all postings in a
 *   few typed arrays, each list with some room to grow; a list that outgrows it gets arrays of
 *   its own, twice as long.
 * - Each field's length in each document (its distinct words, as MiniSearch counts them) is in
 *   a typed array per field, with their sum over the live documents for the average.
 * - A removed document is only marked dead (a tombstone): its postings stay and are skipped
 *   when read; its terms' live counts and its field lengths are taken off the totals.
 */
import SearchableMap from 'minisearch/SearchableMap';
import type { CatalogItem } from '../items/item-catalog.js';
import { FilterColumns, itemFacts, type ItemFacts } from './item-filter.js';
import { SEARCH_FIELDS, fieldValues } from './search-fields.js';
import { forEachWord, phraseText } from './search-words.js';

/** How many fields are indexed; field numbers are positions in {@link SEARCH_FIELDS}. */
export const FIELD_COUNT = SEARCH_FIELDS.length;
const STARTS = FIELD_COUNT + 1;

/** The postings of one term in one field. */
export interface Postings {
  /** Document numbers, increasing; the first {@link count} are used. */
  docs: Int32Array;
  /**
   * Where each document's positions start in {@link pos}: `docs[i]`'s are from `at[i]` to
   * `at[i + 1]` (so `at[count]` is where the next would start).
   */
  at: Int32Array;
  /** Positions in {@link TermIndex.stream}. */
  pos: Int32Array;
  /** The term before each position in the stream (-1 at the start of a value). */
  before: Int32Array;
  /** The term after each position in the stream (-1 at the end of a value). */
  after: Int32Array;
  count: number;
  /** How many of the documents are live. */
  live: number;
}

/** A document of the index. */
export interface IndexedDoc {
  readonly id: string;
  /** The item; a new object with the same text replaces it in place (see `TermIndex.renew`). */
  item: CatalogItem;
  /** What orders read of it. */
  facts: ItemFacts;
  /** Each field's values as phrases are compared with them, made when first needed. */
  phrases: (readonly string[] | undefined)[] | undefined;
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
  /** What filters read of each document, by number. */
  readonly columns = new FilterColumns(64);
  /** Each field's length (distinct words) by document number. */
  readonly lengths: Uint32Array[] = SEARCH_FIELDS.map(() => new Uint32Array(64));
  /** The sum of each field's length over the live documents. */
  readonly lengthSums = new Float64Array(FIELD_COUNT);
  /** Live documents. */
  liveCount = 0;
  /** Removed documents whose postings are still there. */
  deadCount = 0;
  /**
   * The words of every document as term numbers: document after document, field after field,
   * each field value followed by -1 (the first {@link streamLength} entries).
   */
  stream = new Int32Array(1024);
  /** Where each word of the {@link stream} starts in its value. */
  offsets = new Int32Array(1024);
  /** The value each word of the {@link stream} is in (its number in {@link values}). */
  valueOf = new Int32Array(1024);
  streamLength = 0;
  /** Every field value, lowercased, in the order of the stream ('' once its document is removed). */
  readonly values: string[] = [];
  /** Where the fields of document `num` start in the stream: `FIELD_COUNT + 1` from `num * (FIELD_COUNT + 1)`. */
  fieldStarts = new Int32Array(64 * STARTS);

  private seen = new Int32Array(64);
  private seenEpoch = 0;
  /** While building: documents and positions per postings list. */
  private counts: Int32Array | undefined;

  /** An index of `items` (document id and item), numbered in that order. */
  static build(items: Iterable<readonly [string, CatalogItem]>): TermIndex {
    const index = new TermIndex();
    index.counts = new Int32Array(2 * 64 * FIELD_COUNT);
    for (const [id, item] of items) {
      const num = index.docs.length;
      index.grow(num + 1);
      index.docs.push(index.read(num, id, item));
    }
    const counts = index.counts;
    index.counts = undefined;
    const slots = index.words.length * FIELD_COUNT;
    let docTotal = 0;
    let posTotal = 0;
    for (let slot = 0; slot < slots; slot++) {
      docTotal += room(counts[2 * slot]!);
      posTotal += room(counts[2 * slot + 1]!);
    }
    const docArena = new Int32Array(docTotal);
    const atArena = new Int32Array(docTotal + slots);
    const posArena = new Int32Array(posTotal);
    const beforeArena = new Int32Array(posTotal);
    const afterArena = new Int32Array(posTotal);
    let d = 0;
    let a = 0;
    let p = 0;
    for (let slot = 0; slot < slots; slot++) {
      const count = counts[2 * slot]!;
      if (count === 0) continue;
      const docRoom = room(count);
      const posRoom = room(counts[2 * slot + 1]!);
      index.postings[slot] = {
        docs: docArena.subarray(d, (d += docRoom)),
        at: atArena.subarray(a, (a += docRoom + 1)),
        pos: posArena.subarray(p, p + posRoom),
        before: beforeArena.subarray(p, p + posRoom),
        after: afterArena.subarray(p, (p += posRoom)),
        count: 0,
        live: 0,
      };
    }
    for (let num = 0; num < index.docs.length; num++) index.post(num);
    return index;
  }

  /** Adds `item` under `id`; returns its document number. */
  add(id: string, item: CatalogItem): number {
    const num = this.docs.length;
    this.grow(num + 1);
    this.docs.push(this.read(num, id, item));
    this.post(num);
    return num;
  }

  /** Puts `item`, which has the same text as document `num`'s item, in its place. */
  renew(num: number, item: CatalogItem): void {
    const doc = this.docs[num]!;
    doc.item = item;
    doc.facts = itemFacts(item);
    this.columns.set(num, item, doc.facts.date);
  }

  /** Marks document `num` removed: its postings stay, skipped, until the index is built again. */
  remove(num: number): void {
    if (this.docs[num] === undefined) return;
    this.alive[num] = 0;
    this.docs[num] = undefined;
    this.liveCount--;
    this.deadCount++;
    const { stream, fieldStarts } = this;
    const base = num * STARTS;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const epoch = this.nextSeen();
      for (let p = fieldStarts[base + f]!; p < fieldStarts[base + f + 1]!; p++) {
        const term = stream[p]!;
        if (term < 0) this.values[this.valueOf[p]!] = '';
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

  /** Splits an item's fields into words onto the stream (and counts them, while building). */
  private read(num: number, id: string, item: CatalogItem): IndexedDoc {
    const base = num * STARTS;
    for (let f = 0; f < FIELD_COUNT; f++) {
      this.fieldStarts[base + f] = this.streamLength;
      const epoch = this.nextSeen();
      for (const value of fieldValues(item, SEARCH_FIELDS[f]!)) {
        const lowercased = value.toLowerCase();
        const valueNum = this.values.length;
        this.values.push(lowercased);
        forEachWord(lowercased, (word, offset) => {
          const term = this.intern(word);
          this.append(term, offset, valueNum);
          const counts = this.counts;
          if (counts === undefined) return;
          const slot = term * FIELD_COUNT + f;
          counts[2 * slot + 1]!++;
          if (this.seen[term] !== epoch) {
            this.seen[term] = epoch;
            counts[2 * slot]!++;
          }
        });
        this.append(-1, -1, valueNum);
      }
    }
    this.fieldStarts[base + FIELD_COUNT] = this.streamLength;
    const facts = itemFacts(item);
    this.columns.set(num, item, facts.date);
    return { id, item, facts, phrases: undefined };
  }

  /** Puts a word (its term number, offset and value) at the end of the stream. */
  private append(term: number, offset: number, value: number): void {
    const at = this.streamLength++;
    if (at === this.stream.length) {
      this.stream = grown(this.stream, at + 1);
      this.offsets = grown(this.offsets, at + 1);
      this.valueOf = grown(this.valueOf, at + 1);
    }
    this.stream[at] = term;
    this.offsets[at] = offset;
    this.valueOf[at] = value;
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
    if (term >= this.seen.length) this.seen = grown(this.seen, term + 1);
    if (this.counts !== undefined && 2 * (term + 1) * FIELD_COUNT > this.counts.length)
      this.counts = grown(this.counts, 2 * (term + 1) * FIELD_COUNT);
    return term;
  }

  /** Adds document `num`'s words to the postings and its field lengths to the totals. */
  private post(num: number): void {
    const { stream, fieldStarts, seen } = this;
    const base = num * STARTS;
    this.alive[num] = 1;
    this.liveCount++;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const epoch = this.nextSeen();
      let distinct = 0;
      for (let p = fieldStarts[base + f]!; p < fieldStarts[base + f + 1]!; p++) {
        const term = stream[p]!;
        if (term < 0) continue;
        const slot = term * FIELD_COUNT + f;
        let list = this.postings[slot];
        if (list === undefined) {
          const [docs, at] = [new Int32Array(4), new Int32Array(5)];
          const [pos, before, after] = [new Int32Array(4), new Int32Array(4), new Int32Array(4)];
          this.postings[slot] = list = { docs, at, pos, before, after, count: 0, live: 0 };
        }
        let count = list.count;
        if (seen[term] !== epoch) {
          seen[term] = epoch;
          distinct++;
          if (count + 1 > list.docs.length) list.docs = grown(list.docs, count + 1);
          if (count + 2 > list.at.length) list.at = grown(list.at, count + 2);
          list.docs[count] = num;
          list.at[count + 1] = list.at[count]!;
          list.count = ++count;
          list.live++;
        }
        const end = list.at[count]!;
        if (end + 1 > list.pos.length) {
          list.pos = grown(list.pos, end + 1);
          list.before = grown(list.before, end + 1);
          list.after = grown(list.after, end + 1);
        }
        list.pos[end] = p;
        list.before[end] = p === 0 ? -1 : stream[p - 1]!;
        list.after[end] = stream[p + 1]!;
        list.at[count] = end + 1;
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
    this.alive = grown(this.alive, count);
    this.fieldStarts = grown(this.fieldStarts, count * STARTS);
    for (let f = 0; f < FIELD_COUNT; f++) this.lengths[f] = grown(this.lengths[f]!, count);
  }
}

/** The room a build gives a postings list of `count` entries: some to spare for later ones. */
function room(count: number): number {
  return count === 0 ? 0 : count + 2 + (count >> 4);
}

/** A copy of `array` with room for at least `size` entries (and at least twice as many). */
function grown<T extends Int32Array | Uint32Array | Uint8Array>(array: T, size: number): T {
  const copy = new (array.constructor as new (n: number) => T)(Math.max(size, array.length * 2, 4));
  copy.set(array);
  return copy;
}

/** `word` written backwards (by code point). */
export function backwards(word: string): string {
  let out = '';
  for (const c of word) out = c + out;
  return out;
}

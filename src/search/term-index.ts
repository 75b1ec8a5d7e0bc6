/**
 * The inverted index under {@link ItemIndex}: a term dictionary, compact postings and the words
 * of each document, in a few large typed arrays rather than in objects per document, per
 * postings list or per match (which also leaves the garbage collector little to trace).
 *
 * - Terms are interned: each distinct word gets a number the first time it is seen. MiniSearch's
 *   `SearchableMap` (a radix tree) maps each word to its number for prefix and fuzzy lookups,
 *   and a second one maps each word written backwards, for the words that end a given way
 *   (phrases need those).
 * - Documents are numbered as they are added. Their words, as term numbers, go one after the
 *   other into one array, the stream (document after document, field after field, each field
 *   value followed by -1 so that no two values run together), with where each word starts in
 *   its value beside it. The values themselves, lowercased, are kept in the same order, with
 *   where each starts in the stream; and where each document's fields and values start.
 * - The postings of each term in each field are in {@link Postings}.
 * - Each field's length in each document (its distinct words, as MiniSearch counts them) is in
 *   a typed array per field, with their sum over the live documents for the average.
 * - A removed document is only marked dead (a tombstone): its postings stay and are skipped
 *   when read; its terms' live counts and its field lengths are taken off the totals.
 */
import SearchableMap from 'minisearch/SearchableMap';
import type { CatalogItem } from '../items/item-catalog.js';
import { grown } from './grown.js';
import { FilterColumns, itemDate } from './item-filter.js';
import { Postings } from './postings.js';
import { SEARCH_FIELDS, fieldValues } from './search-fields.js';
import { backwards, forEachWord, phraseText } from './search-words.js';

/** How many fields are indexed; field numbers are positions in {@link SEARCH_FIELDS}. */
export const FIELD_COUNT = SEARCH_FIELDS.length;
const STARTS = FIELD_COUNT + 1;

export class TermIndex {
  /** Term numbers by word. */
  readonly terms = new Map<string, number>();
  /** Words by term number. */
  readonly words: string[] = [];
  /** Word to term number, for prefix and fuzzy lookups. */
  readonly dictionary = new SearchableMap<number>();
  /** Word written backwards to term number, for the words that end a given way. */
  readonly backwards = new SearchableMap<number>();

  /** Document ids by number. */
  readonly ids: string[] = [];
  /** Items by document number (`undefined` once removed). */
  readonly items: (CatalogItem | undefined)[] = [];
  /** Names, lowercased, by document number (for the `name` order). */
  readonly names: string[] = [];
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
  streamLength = 0;
  /** Every field value, lowercased, in the order of the stream ('' once its document is removed). */
  readonly values: string[] = [];
  /** Where each of the {@link values} starts in the stream. */
  valueStarts = new Int32Array(256);
  /** The first of each document's values (its number in {@link values}), by document number. */
  firstValues = new Int32Array(64);
  /** Where the fields of document `num` start in the stream: `FIELD_COUNT + 1` from `num * (FIELD_COUNT + 1)`. */
  fieldStarts = new Int32Array(64 * STARTS);

  /** The postings of each term in each field. */
  readonly postings = new Postings();

  private seen = new Int32Array(64);
  private seenEpoch = 0;
  /** While building: documents and positions per postings list. */
  private counts: Int32Array | undefined;
  /** Each document's field values as phrases are compared with them, made when first needed. */
  private readonly phraseTexts: ((readonly string[] | undefined)[] | undefined)[] = [];

  /** An index of `items` (document id and item), numbered in that order. */
  static build(items: Iterable<readonly [string, CatalogItem]>): TermIndex {
    const index = new TermIndex();
    index.counts = new Int32Array(2 * 64 * FIELD_COUNT);
    // Room in the stream for a word every five characters and the end of each value (more
    // is made if need be), and for the values.
    const all = [...items];
    let capacity = 0;
    let values = 0;
    for (const [, item] of all)
      for (const field of SEARCH_FIELDS)
        for (const value of fieldValues(item, field)) {
          capacity += Math.ceil(value.length / 5) + 1;
          values++;
        }
    index.stream = new Int32Array(capacity);
    index.offsets = new Int32Array(capacity);
    index.valueStarts = new Int32Array(values);
    for (const [id, item] of all) index.read(id, item);
    const counts = index.counts;
    index.counts = undefined;
    // Every list's runs, in the order of the slots, with room to grow.
    index.postings.layOut(counts, index.words.length * FIELD_COUNT);
    for (let num = 0; num < index.ids.length; num++) index.post(num);
    return index;
  }

  /** Adds `item` under `id`; returns its document number. */
  add(id: string, item: CatalogItem): number {
    const num = this.read(id, item);
    this.post(num);
    return num;
  }

  /** Puts `item`, which has the same text as document `num`'s item, in its place. */
  renew(num: number, item: CatalogItem): void {
    this.items[num] = item;
    this.names[num] = item.name.toLowerCase();
    this.columns.set(num, item);
  }

  /** Marks document `num` removed: its postings stay, skipped, until the index is built again. */
  remove(num: number): void {
    if (this.items[num] === undefined) return;
    this.alive[num] = 0;
    this.items[num] = undefined;
    this.phraseTexts[num] = undefined;
    this.liveCount--;
    this.deadCount++;
    const { stream, fieldStarts } = this;
    const base = num * STARTS;
    const end = fieldStarts[base + FIELD_COUNT]!;
    for (let v = this.firstValues[num]!; v < this.values.length && this.valueStarts[v]! < end; v++)
      this.values[v] = '';
    for (let f = 0; f < FIELD_COUNT; f++) {
      const epoch = this.nextSeen();
      for (let p = fieldStarts[base + f]!; p < fieldStarts[base + f + 1]!; p++) {
        const term = stream[p]!;
        if (term < 0 || this.seen[term] === epoch) continue;
        this.seen[term] = epoch;
        this.postings.listLive[term * FIELD_COUNT + f]!--;
      }
      this.lengthSums[f] = this.lengthSums[f]! - this.lengths[f]![num]!;
    }
  }

  /** The value (its number in {@link values}) that position `p` of document `num`'s words is in. */
  valueAt(num: number, p: number): number {
    const starts = this.valueStarts;
    let v = this.firstValues[num]!;
    while (v + 1 < this.values.length && starts[v + 1]! <= p) v++;
    return v;
  }

  /** The phrase form of the values of field `f` of document `num` (see `phraseText`). */
  phrases(num: number, f: number): readonly string[] {
    const all = (this.phraseTexts[num] ??= []);
    return (all[f] ??= fieldValues(this.items[num]!, SEARCH_FIELDS[f]!).map(phraseText));
  }

  /** Numbers a new document and splits its fields into words onto the stream (counting them, while building). */
  private read(id: string, item: CatalogItem): number {
    const num = this.ids.length;
    this.grow(num + 1);
    this.ids.push(id);
    this.items.push(item);
    this.names.push(item.name.toLowerCase());
    this.phraseTexts.push(undefined);
    this.columns.set(num, item, itemDate(item));
    this.firstValues[num] = this.values.length;
    const base = num * STARTS;
    for (let f = 0; f < FIELD_COUNT; f++) {
      this.fieldStarts[base + f] = this.streamLength;
      const epoch = this.nextSeen();
      for (const value of fieldValues(item, SEARCH_FIELDS[f]!)) {
        const lowercased = value.toLowerCase();
        const valueNum = this.values.length;
        this.values.push(lowercased);
        if (valueNum === this.valueStarts.length)
          this.valueStarts = grown(this.valueStarts, valueNum + 1);
        this.valueStarts[valueNum] = this.streamLength;
        forEachWord(lowercased, (word, offset) => {
          const term = this.intern(word);
          this.append(term, offset);
          const counts = this.counts;
          if (counts === undefined) return;
          const slot = term * FIELD_COUNT + f;
          counts[2 * slot + 1]!++;
          if (this.seen[term] !== epoch) {
            this.seen[term] = epoch;
            counts[2 * slot]!++;
          }
        });
        this.append(-1, -1);
      }
    }
    this.fieldStarts[base + FIELD_COUNT] = this.streamLength;
    return num;
  }

  /** Puts a word (its term number and offset) at the end of the stream. */
  private append(term: number, offset: number): void {
    const at = this.streamLength++;
    if (at === this.stream.length) {
      this.stream = grown(this.stream, at + 1);
      this.offsets = grown(this.offsets, at + 1);
    }
    this.stream[at] = term;
    this.offsets[at] = offset;
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
    const slots = (term + 1) * FIELD_COUNT;
    this.postings.reserve(slots);
    if (term >= this.seen.length) this.seen = grown(this.seen, term + 1);
    if (this.counts !== undefined && 2 * slots > this.counts.length)
      this.counts = grown(this.counts, 2 * slots);
    return term;
  }

  /** Adds document `num`'s words to the postings and its field lengths to the totals. */
  private post(num: number): void {
    const { fieldStarts, seen, postings } = this;
    const base = num * STARTS;
    this.alive[num] = 1;
    this.liveCount++;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const epoch = this.nextSeen();
      let distinct = 0;
      for (let p = fieldStarts[base + f]!; p < fieldStarts[base + f + 1]!; p++) {
        const term = this.stream[p]!;
        if (term < 0) continue;
        const slot = term * FIELD_COUNT + f;
        if (seen[term] !== epoch) {
          seen[term] = epoch;
          distinct++;
          postings.addEntry(slot, num);
        }
        postings.addPosition(slot, p, p === 0 ? -1 : this.stream[p - 1]!, this.stream[p + 1]!);
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
    this.firstValues = grown(this.firstValues, count);
    this.fieldStarts = grown(this.fieldStarts, count * STARTS);
    for (let f = 0; f < FIELD_COUNT; f++) this.lengths[f] = grown(this.lengths[f]!, count);
  }
}

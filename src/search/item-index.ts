/**
 * Ranked full-text search over a project's items, on an inverted index that follows the item
 * catalog: each search asks the catalog for its items, and when they changed (the catalog
 * returns a new array) the documents that changed are replaced, the new ones added and the gone
 * ones discarded; the index is built again only when most of it changed.
 *
 * The design, for searches in a millisecond or so over tens of thousands of items whose words
 * are shared by thousands of them (where a general-purpose engine that makes an object per
 * match, per field and per word spends its time allocating and collecting them):
 * - {@link TermIndex} holds the index in a few large typed arrays. Each field of an item is
 *   split into words once, when it is added; every word is interned as a term number, with
 *   MiniSearch's `SearchableMap` (a radix tree) as the dictionary for prefix and typo lookups.
 *   Per term and field, the postings list the documents that have it, how often and at which
 *   positions (with the words next to each); the words of all documents follow one another in
 *   one array of term numbers; each field's length per document is a typed array; what the
 *   filters read is in columns of numbers by document.
 * - {@link IndexQuery} scores each word straight from its postings (BM25+, as MiniSearch did,
 *   with {@link FIELD_BOOSTS}) into a dense accumulator over the document numbers, resetting
 *   only what it touched, and combines `and`, `or` and `not` as sets of document numbers
 *   marked with epochs; its sets come from a pool that the next query reuses. A phrase is
 *   found from the positions of its rarest word: the words next to each are checked in the
 *   postings, and the text where they fit; only the documents found are scored.
 * - A replaced or discarded document is a tombstone (skipped when read) until the tombstones
 *   outnumber the live documents, when the index is built again.
 * - The filters are applied to the matched documents only, and only the requested page is put
 *   in order (a partial selection, see {@link rankedPage}).
 */
import type { CatalogItem, ItemCatalog } from '../items/item-catalog.js';
import { IndexQuery, finalScore } from './index-query.js';
import { itemFilter } from './item-filter.js';
import { rankedPage, type SearchPage } from './search-page.js';
import { checkSearchRequest, type SearchRequest } from './search-request.js';
import { TermIndex } from './term-index.js';

/** Where an {@link ItemIndex} gets its items: a catalog, or any function returning them. */
export type ItemSource = Pick<ItemCatalog, 'items'> | (() => Promise<CatalogItem[]>);

/** What bringing the index up to date did. */
export interface IndexUpdate {
  /**
   * Whether the index was built from scratch (the first time, when most items changed, or when
   * the documents replaced or discarded since it was built came to outnumber the others).
   */
  rebuilt: boolean;
  added: number;
  replaced: number;
  discarded: number;
  /** Documents in the index afterwards. */
  documents: number;
}

/**
 * The document id of an item: `space:kind:itemId` (unique among the items of a catalog, except
 * for a built-in tool and a system file of the same id, whose built-in one gets `#builtin`).
 */
export function itemDocumentId(item: CatalogItem): string {
  return `${item.space}:${item.kind}:${item.itemId}`;
}

/** The share of the documents that may change before the index is built again instead. */
const REBUILD_SHARE = 0.5;

/**
 * Search over the items of an {@link ItemSource}. The query language is {@link parseQuery}'s;
 * a word of 4 or more characters also finds words a typo or two away (see `fuzzyDistance`).
 * Fields count with {@link FIELD_BOOSTS}; scores are BM25+ scores (see {@link IndexQuery}),
 * normalised to 0..1 within each result set (the best match scores 1).
 */
export class ItemIndex {
  private readonly source: () => Promise<CatalogItem[]>;
  private index = new TermIndex();
  private query = new IndexQuery(this.index);
  /** Document numbers by document id. */
  private readonly numbers = new Map<string, number>();
  /** The document id of each item seen (the same string each time, quick to look up). */
  private readonly ids = new WeakMap<CatalogItem, string>();
  private indexed: readonly CatalogItem[] | undefined;
  private last: IndexUpdate | undefined;
  /** The document numbers and scores of a search's matches that pass its filters (reused). */
  private found = new Int32Array(0);
  private scores = new Float64Array(0);

  constructor(source: ItemSource) {
    this.source = typeof source === 'function' ? source : () => source.items();
  }

  /** What the last change of items did to the index (`undefined` before the first search). */
  get lastUpdate(): IndexUpdate | undefined {
    return this.last;
  }

  /**
   * Brings the index up to date with the source's items; returns what it did, or `undefined`
   * when nothing changed. Searching does this first, so calling it is never needed.
   */
  async refresh(): Promise<IndexUpdate | undefined> {
    const items = await this.source();
    if (items === this.indexed) return undefined;
    return this.update(items);
  }

  /**
   * One page of the items matching `request`. Throws `INVALID_QUERY` for a malformed query and
   * `INVALID_REQUEST` for a bad filter, sort, limit or offset (see `checkSearchRequest`).
   */
  async search(request: SearchRequest = {}): Promise<SearchPage> {
    const search = checkSearchRequest(request);
    await this.refresh();
    const hits = this.query.run(search.tree);
    const index = this.index;
    const passes = itemFilter(search, index.columns);
    const { found, scores } = this;
    let count = 0;
    for (let i = 0; i < hits.size; i++) {
      const num = hits.docs[i]!;
      if (passes !== undefined && !passes(num)) continue;
      found[count] = num;
      scores[count++] = finalScore(hits.scores[i]!, hits.words[i]!);
    }
    return rankedPage(
      {
        count,
        docs: found,
        scores,
        items: index.items,
        dates: index.columns.date,
        names: index.names,
      },
      search,
    );
  }

  private update(items: readonly CatalogItem[]): IndexUpdate {
    const next = new Map<string, CatalogItem>();
    for (const item of items) {
      let id = this.ids.get(item);
      if (id === undefined) this.ids.set(item, (id = itemDocumentId(item)));
      if (next.has(id)) id = item.file === undefined ? `${id}#builtin` : `${id}#${next.size}`;
      next.set(id, item);
    }
    const index = this.index;
    const added: string[] = [];
    const replaced: string[] = [];
    for (const [id, item] of next) {
      const num = this.numbers.get(id);
      const known = num === undefined ? undefined : index.items[num]!;
      if (known === undefined) added.push(id);
      else if (known !== item) {
        if (sameText(known, item)) index.renew(num!, item);
        else replaced.push(id);
      }
    }
    const discarded = [...this.numbers.keys()].filter((id) => !next.has(id));
    const changes = added.length + replaced.length + discarded.length;
    const rebuilt =
      this.indexed === undefined ||
      changes > REBUILD_SHARE * Math.max(this.numbers.size, next.size, 1) ||
      index.deadCount + replaced.length + discarded.length > next.size;
    if (rebuilt) {
      this.index = TermIndex.build(next);
      this.query = new IndexQuery(this.index);
      this.numbers.clear();
      let num = 0;
      for (const id of next.keys()) this.numbers.set(id, num++);
    } else {
      for (const id of [...discarded, ...replaced]) {
        index.remove(this.numbers.get(id)!);
        this.numbers.delete(id);
      }
      for (const id of [...replaced, ...added]) this.numbers.set(id, index.add(id, next.get(id)!));
    }
    this.query.prepare();
    if (this.found.length < this.index.ids.length) {
      this.found = new Int32Array(this.index.ids.length * 2);
      this.scores = new Float64Array(this.index.ids.length * 2);
    }
    this.indexed = items;
    this.last = {
      rebuilt,
      added: rebuilt ? next.size : added.length,
      replaced: rebuilt ? 0 : replaced.length,
      discarded: rebuilt ? 0 : discarded.length,
      documents: next.size,
    };
    return this.last;
  }
}

/** Whether two versions of an item have the same searchable text. */
function sameText(a: CatalogItem, b: CatalogItem): boolean {
  return (
    a.modifiedAt === b.modifiedAt &&
    a.itemId === b.itemId &&
    a.name === b.name &&
    a.title === b.title &&
    a.description === b.description &&
    a.category === b.category &&
    a.content === b.content &&
    a.tags.length === b.tags.length &&
    a.tags.every((t, i) => t === b.tags[i])
  );
}

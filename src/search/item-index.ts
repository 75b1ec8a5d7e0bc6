/**
 * Ranked full-text search over a project's items, on a MiniSearch inverted index that follows
 * the item catalog: each search asks the catalog for its items, and when they changed (the
 * catalog returns a new array) the documents that changed are replaced, the new ones added and
 * the gone ones discarded; the index is built again only when most of it changed.
 */
import MiniSearch, { type Query, type SearchOptions } from 'minisearch';
import type { CatalogItem, ItemCatalog } from '../items/item-catalog.js';
import { passesFilters } from './item-filter.js';
import type { QueryField, QueryNode } from './query-node.js';
import { FIELD_BOOSTS, SEARCH_FIELDS, fieldValues } from './search-fields.js';
import { searchPage, type ScoredItem, type SearchPage } from './search-page.js';
import { checkSearchRequest, type SearchRequest } from './search-request.js';
import { fuzzyDistance, phraseText, searchWords } from './search-words.js';

/** Where an {@link ItemIndex} gets its items: a catalog, or any function returning them. */
export type ItemSource = Pick<ItemCatalog, 'items'> | (() => Promise<CatalogItem[]>);

/** What bringing the index up to date did. */
export interface IndexUpdate {
  /** Whether the index was built from scratch (the first time, or when most items changed). */
  rebuilt: boolean;
  added: number;
  replaced: number;
  discarded: number;
  /** Documents in the index afterwards. */
  documents: number;
}

/** A document of the index: an item under its stable id. */
interface IndexedItem {
  docId: string;
  item: CatalogItem;
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
 * Fields count with {@link FIELD_BOOSTS}; scores are MiniSearch's BM25+ scores, normalised to
 * 0..1 within each result set (the best match scores 1).
 */
export class ItemIndex {
  private readonly source: () => Promise<CatalogItem[]>;
  private index = ItemIndex.emptyIndex();
  private readonly docs = new Map<string, CatalogItem>();
  private indexed: readonly CatalogItem[] | undefined;
  private last: IndexUpdate | undefined;
  private readonly phraseCache = new WeakMap<CatalogItem, Partial<Record<QueryField, string[]>>>();

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
    const found: ScoredItem[] = [];
    for (const result of this.index.search(this.queryOf(search.tree))) {
      const item = this.docs.get(result.id as string);
      if (item !== undefined && passesFilters(item, search))
        found.push({ item, score: result.score });
    }
    return searchPage(found, search);
  }

  private static emptyIndex(): MiniSearch<IndexedItem> {
    return new MiniSearch<IndexedItem>({
      idField: 'docId',
      fields: SEARCH_FIELDS,
      extractField: (doc, field) =>
        field === 'docId' ? doc.docId : fieldValues(doc.item, field as QueryField).join(' '),
      tokenize: searchWords,
      processTerm: (term) => term,
      searchOptions: { boost: FIELD_BOOSTS },
    });
  }

  private update(items: readonly CatalogItem[]): IndexUpdate {
    const next = new Map<string, CatalogItem>();
    for (const item of items) {
      let id = itemDocumentId(item);
      if (next.has(id)) id = item.file === undefined ? `${id}#builtin` : `${id}#${next.size}`;
      next.set(id, item);
    }
    const added: IndexedItem[] = [];
    const replaced: IndexedItem[] = [];
    for (const [docId, item] of next) {
      const known = this.docs.get(docId);
      if (known === undefined) added.push({ docId, item });
      else if (known !== item && !sameText(known, item)) replaced.push({ docId, item });
    }
    const discarded = [...this.docs.keys()].filter((id) => !next.has(id));
    const changes = added.length + replaced.length + discarded.length;
    const rebuilt =
      this.indexed === undefined ||
      changes > REBUILD_SHARE * Math.max(this.docs.size, next.size, 1);
    if (rebuilt) {
      this.index = ItemIndex.emptyIndex();
      this.index.addAll([...next].map(([docId, item]) => ({ docId, item })));
    } else {
      for (const id of discarded) this.index.discard(id);
      for (const doc of replaced) this.index.replace(doc);
      this.index.addAll(added);
    }
    this.docs.clear();
    for (const [id, item] of next) this.docs.set(id, item);
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

  /** The MiniSearch query of a query tree. */
  private queryOf(node: QueryNode): Query {
    switch (node.type) {
      case 'all':
        return MiniSearch.wildcard;
      case 'not':
        return { combineWith: 'AND_NOT', queries: [MiniSearch.wildcard, this.queryOf(node.child)] };
      case 'or':
        return { combineWith: 'OR', queries: node.children.map((c) => this.queryOf(c)) };
      case 'and': {
        const wanted = node.children.filter((c) => c.type !== 'not').map((c) => this.queryOf(c));
        const unwanted = node.children.flatMap((c) => (c.type === 'not' ? [c.child] : []));
        const base: Query =
          wanted.length === 0
            ? MiniSearch.wildcard
            : wanted.length === 1
              ? wanted[0]!
              : { combineWith: 'AND', queries: wanted };
        if (unwanted.length === 0) return base;
        return {
          combineWith: 'AND_NOT',
          queries: [base, ...unwanted.map((c) => this.queryOf(c))],
        };
      }
      case 'term': {
        const last = node.words.length - 1;
        const prefix = node.prefix;
        return {
          combineWith: 'AND',
          queries: [node.words.join(' ')],
          ...fieldsOf(node.field),
          prefix: (_term, i) => prefix && i === last,
          fuzzy: (term, i) => (prefix && i === last ? false : fuzzyDistance(term) || false),
        };
      }
      case 'phrase': {
        // The documents with all its words, then those of them with the words together; the
        // others get a boost of 0, which MiniSearch leaves out.
        const words: Query = {
          combineWith: 'AND',
          queries: [node.words.join(' ')],
          ...fieldsOf(node.field),
          prefix: false,
          fuzzy: false,
        };
        const wanted = phraseText(node.text);
        const fields = node.field === undefined ? SEARCH_FIELDS : [node.field];
        const having = new Set<string>();
        for (const { id } of this.index.search(words)) {
          const item = this.docs.get(id as string);
          if (
            item !== undefined &&
            fields.some((f) => this.phraseTexts(item, f).some((t) => t.includes(wanted)))
          )
            having.add(id as string);
        }
        return { ...words, boostDocument: (docId: string) => (having.has(docId) ? 1 : 0) };
      }
    }
  }

  /** The text of a field of an item as phrases are compared with it, kept while the item is. */
  private phraseTexts(item: CatalogItem, field: QueryField): string[] {
    let texts = this.phraseCache.get(item);
    if (texts === undefined) this.phraseCache.set(item, (texts = {}));
    return (texts[field] ??= fieldValues(item, field).map(phraseText));
  }
}

function fieldsOf(field: QueryField | undefined): Pick<SearchOptions, 'fields'> {
  return { fields: field === undefined ? SEARCH_FIELDS : [field] };
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

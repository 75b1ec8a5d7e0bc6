/** What a search returns: one page of hits, ordered, with the total. */
import type { CatalogItem, SignatureState } from '../items/item-catalog.js';
import type { ItemKind } from '../items/item-kind.js';
import type { SpaceName } from '../items/space.js';
import { itemDate } from './item-filter.js';
import type { CheckedSearch } from './search-request.js';

/** One item found (its descriptive fields, without its text). */
export interface SearchHit {
  itemId: string;
  kind: ItemKind;
  space: SpaceName;
  name: string;
  title?: string;
  description?: string;
  category?: string;
  version?: string;
  tags: string[];
  /** How well it matches, 0 to 1 (see {@link SearchPage}). */
  score: number;
  signature: SignatureState;
  /** Whether an item of the same kind and id in a higher space is used instead of this one. */
  shadowed: boolean;
  /** That higher space. */
  shadowedBy?: SpaceName;
  /** The lower spaces whose item of the same kind and id this one hides. */
  shadows: SpaceName[];
  /** When its file last changed (epoch ms; 0 for a built-in tool). */
  modifiedAt: number;
  file?: string;
}

/**
 * One page of results. Scores are relative to the results of this search: the best match scores
 * 1 and the others their share of its score (so a query that ranks nothing, such as the empty
 * one, scores every item 1).
 */
export interface SearchPage {
  results: SearchHit[];
  /** How many items match, over all pages. */
  total: number;
  limit: number;
  offset: number;
  /** The query as given ('' when none). */
  query: string;
}

/** An item and its raw score, before normalising. */
export interface ScoredItem {
  item: CatalogItem;
  score: number;
}

/**
 * The items a search found, for {@link rankedPage}, as an index has them (arrays by document
 * number, no object per item found): found item `i` (0 to `count` − 1) is document `docs[i]`
 * and scores `scores[i]`.
 */
export interface FoundItems {
  readonly count: number;
  readonly docs: Int32Array;
  readonly scores: Float64Array;
  /** Items by document number. */
  readonly items: readonly (CatalogItem | undefined)[];
  /** Dates (see `itemDate`) by document number; only read for the `date` order. */
  readonly dates: Float64Array;
  /** Names, lowercased, by document number; only read for the `name` order. */
  readonly names: readonly string[];
}

const SPACE_ORDER: Record<SpaceName, number> = { project: 0, user: 1, system: 2 };

/**
 * Orders `found` as `search.sort` says, normalises the scores and cuts out the page. Only the
 * items up to the end of the page are put in order (a partial selection), not all of them.
 */
export function searchPage(found: readonly ScoredItem[], search: CheckedSearch): SearchPage {
  const items = found.map((f) => f.item);
  return rankedPage(
    {
      count: found.length,
      docs: Int32Array.from(found, (_, i) => i),
      scores: Float64Array.from(found, (f) => f.score),
      items,
      dates: search.sort === 'date' ? Float64Array.from(items, itemDate) : new Float64Array(0),
      names: search.sort === 'name' ? items.map((item) => item.name.toLowerCase()) : [],
    },
    search,
  );
}

/** {@link searchPage} for found items as an index has them. */
export function rankedPage(found: FoundItems, search: CheckedSearch): SearchPage {
  const { count, docs, scores, items } = found;
  let best = 0;
  for (let i = 0; i < count; i++) if (scores[i]! > best) best = scores[i]!;
  const page = firstInOrder(count, orderFor(found, search), search.offset + search.limit);
  return {
    results: page
      .slice(search.offset)
      .map((i) => toHit(items[docs[i]!]!, best > 0 ? scores[i]! / best : 1)),
    total: count,
    limit: search.limit,
    offset: search.offset,
    query: search.query,
  };
}

/** A comparison of two found items by position. */
type Order = (a: number, b: number) => number;

function orderFor(found: FoundItems, search: CheckedSearch): Order {
  const { docs, scores, items, dates, names } = found;
  const tie: Order = (x, y) => {
    const a = items[docs[x]!]!;
    const b = items[docs[y]!]!;
    return (
      SPACE_ORDER[a.space] - SPACE_ORDER[b.space] ||
      compare(a.itemId, b.itemId) ||
      compare(a.kind, b.kind) ||
      compare(a.file ?? '', b.file ?? '')
    );
  };
  if (search.sort === 'date')
    return (a, b) => dates[docs[b]!]! - dates[docs[a]!]! || scores[b]! - scores[a]! || tie(a, b);
  if (search.sort === 'name')
    return (a, b) => compare(names[docs[a]!]!, names[docs[b]!]!) || tie(a, b);
  return (a, b) => scores[b]! - scores[a]! || tie(a, b);
}

/** The positions of the first `count` of `total` found items in `order`, in that order. */
function firstInOrder(total: number, order: Order, count: number): number[] {
  if (count >= total / 4)
    return Array.from({ length: total }, (_, i) => i)
      .sort(order)
      .slice(0, count);
  const top: number[] = [];
  for (let item = 0; item < total; item++) {
    if (top.length === count && order(item, top[count - 1]!) >= 0) continue;
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (order(item, top[mid]!) < 0) hi = mid;
      else lo = mid + 1;
    }
    top.splice(lo, 0, item);
    if (top.length > count) top.pop();
  }
  return top;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function toHit(item: CatalogItem, score: number): SearchHit {
  const hit: SearchHit = {
    itemId: item.itemId,
    kind: item.kind,
    space: item.space,
    name: item.name,
    tags: [...item.tags],
    score,
    signature: item.signature.state,
    shadowed: item.shadowedBy !== undefined,
    shadows: [...item.shadows],
    modifiedAt: item.modifiedAt,
  };
  if (item.title !== undefined) hit.title = item.title;
  if (item.description !== undefined) hit.description = item.description;
  if (item.category !== undefined) hit.category = item.category;
  if (item.version !== undefined) hit.version = item.version;
  if (item.shadowedBy !== undefined) hit.shadowedBy = item.shadowedBy;
  if (item.file !== undefined) hit.file = item.file;
  return hit;
}

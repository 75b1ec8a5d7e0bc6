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

const SPACE_ORDER: Record<SpaceName, number> = { project: 0, user: 1, system: 2 };

/**
 * Orders `found` as `search.sort` says, normalises the scores and cuts out the page. Only the
 * items up to the end of the page are put in order (a partial selection), not all of them.
 */
export function searchPage(found: readonly ScoredItem[], search: CheckedSearch): SearchPage {
  let best = 0;
  for (const f of found) if (f.score > best) best = f.score;
  const page = firstInOrder(found, orderFor(search), search.offset + search.limit).slice(
    search.offset,
  );
  return {
    results: page.map((f) => toHit(f.item, best > 0 ? f.score / best : 1)),
    total: found.length,
    limit: search.limit,
    offset: search.offset,
    query: search.query,
  };
}

type Order = (a: ScoredItem, b: ScoredItem) => number;

function orderFor(search: CheckedSearch): Order {
  const tie: Order = (a, b) =>
    SPACE_ORDER[a.item.space] - SPACE_ORDER[b.item.space] ||
    compare(a.item.itemId, b.item.itemId) ||
    compare(a.item.kind, b.item.kind) ||
    compare(a.item.file ?? '', b.item.file ?? '');
  if (search.sort === 'date') {
    const dates = new Map<CatalogItem, number>();
    const date = (item: CatalogItem) => {
      let d = dates.get(item);
      if (d === undefined) dates.set(item, (d = itemDate(item)));
      return d;
    };
    return (a, b) => date(b.item) - date(a.item) || b.score - a.score || tie(a, b);
  }
  if (search.sort === 'name') {
    const names = new Map<CatalogItem, string>();
    const name = (item: CatalogItem) => {
      let n = names.get(item);
      if (n === undefined) names.set(item, (n = item.name.toLowerCase()));
      return n;
    };
    return (a, b) => compare(name(a.item), name(b.item)) || tie(a, b);
  }
  return (a, b) => b.score - a.score || tie(a, b);
}

/** The first `count` of `items` in `order`, in that order. */
function firstInOrder(items: readonly ScoredItem[], order: Order, count: number): ScoredItem[] {
  if (count >= items.length / 4) return [...items].sort(order).slice(0, count);
  const top: ScoredItem[] = [];
  for (const item of items) {
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

/**
 * The filters of a search (everything but the query), applied to one item, and what of an
 * item the filters and the orders read, in one shape for every item.
 */
import { coerce, valid } from 'semver';
import type { CatalogItem, SignatureState } from '../items/item-catalog.js';
import type { ItemKind } from '../items/item-kind.js';
import type { SpaceName } from '../items/space.js';
import type { CheckedSearch } from './search-request.js';

/**
 * What filtering and ordering read of an item, computed once: items come in many shapes
 * (optional fields present or not), and reading the same few fields of thousands of them is
 * much faster from records that all have one.
 */
export interface ItemFacts {
  readonly kind: ItemKind;
  readonly space: SpaceName;
  readonly itemId: string;
  /** Its file, '' when it has none. */
  readonly file: string;
  /** Its name, lowercased. */
  readonly name: string;
  readonly signature: SignatureState;
  readonly shadowed: boolean;
  /** Its category, lowercased. */
  readonly category: string | undefined;
  /** Its tags, lowercased. */
  readonly tags: readonly string[];
  readonly version: string | undefined;
  /** See {@link itemDate}. */
  readonly date: number;
}

/** The {@link ItemFacts} of `item`. */
export function itemFacts(item: CatalogItem): ItemFacts {
  return {
    kind: item.kind,
    space: item.space,
    itemId: item.itemId,
    file: item.file ?? '',
    name: item.name.toLowerCase(),
    signature: item.signature.state,
    shadowed: item.shadowedBy !== undefined,
    category: item.category?.toLowerCase(),
    tags: item.tags.map((t) => t.toLowerCase()),
    version: item.version,
    date: itemDate(item),
  };
}

/**
 * An item's date for date filters and the `date` sort (epoch ms): its `createdAt`, else its
 * `updatedAt` (the first that parses as a date), else when its file last changed.
 */
export function itemDate(item: CatalogItem): number {
  for (const text of [item.createdAt, item.updatedAt]) {
    if (text === undefined) continue;
    const ms = Date.parse(text);
    if (Number.isFinite(ms)) return ms;
  }
  return item.modifiedAt;
}

/**
 * The filters of `search` (kinds, spaces, category, tags, version, dates, signature,
 * shadowing) as one test to apply to many items by their {@link ItemFacts}, or `undefined` when
 * it has none; what each version string gives is kept for the items that share it.
 */
export function itemFilter(search: CheckedSearch): ((item: ItemFacts) => boolean) | undefined {
  const { kinds, spaces, signature, category, tags, version: range, dateFrom, dateTo } = search;
  if (
    kinds === undefined &&
    spaces === undefined &&
    search.includeShadowed &&
    signature === undefined &&
    category === undefined &&
    tags.length === 0 &&
    range === undefined &&
    dateFrom === undefined &&
    dateTo === undefined
  )
    return undefined;
  const subcategory = `${category}/`;
  const versions = new Map<string, boolean>();
  const inRange = (text: string): boolean => {
    let ok = versions.get(text);
    if (ok === undefined) {
      const version = valid(text) ?? coerce(text);
      versions.set(text, (ok = version !== null && range!.test(version)));
    }
    return ok;
  };
  return (item) => {
    if (kinds !== undefined && !kinds.has(item.kind)) return false;
    if (spaces !== undefined && !spaces.has(item.space)) return false;
    if (!search.includeShadowed && item.shadowed) return false;
    if (signature !== undefined && !signature.has(item.signature)) return false;
    if (category !== undefined) {
      const own = item.category;
      if (own === undefined || (own !== category && !own.startsWith(subcategory))) return false;
    }
    for (const tag of tags) if (!has(item.tags, tag)) return false;
    if (range !== undefined && (item.version === undefined || !inRange(item.version))) return false;
    if (dateFrom !== undefined && item.date < dateFrom) return false;
    if (dateTo !== undefined && item.date > dateTo) return false;
    return true;
  };
}

/** Whether `list` has `value` (a loop: faster than `includes` on the few tags of an item). */
function has(list: readonly string[], value: string): boolean {
  for (let i = 0; i < list.length; i++) if (list[i] === value) return true;
  return false;
}

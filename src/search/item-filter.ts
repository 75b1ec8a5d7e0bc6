/** The filters of a search (everything but the query), applied to one item. */
import { coerce, valid } from 'semver';
import type { CatalogItem } from '../items/item-catalog.js';
import type { CheckedSearch } from './search-request.js';

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

/** Whether `item` passes every filter of `search` (kinds, spaces, category, tags, version, dates, signature, shadowing). */
export function passesFilters(item: CatalogItem, search: CheckedSearch): boolean {
  return itemFilter(search)(item);
}

/**
 * The filters of `search` as one test to apply to many items: as {@link passesFilters}, with
 * what each version string gives kept for the items that share it, and the item's date (see
 * {@link itemDate}) taken as given when it is.
 */
export function itemFilter(search: CheckedSearch): (item: CatalogItem, date?: number) => boolean {
  const range = search.version;
  const versions = new Map<string, boolean>();
  const inRange =
    range === undefined
      ? () => true
      : (text: string | undefined): boolean => {
          if (text === undefined) return false;
          let ok = versions.get(text);
          if (ok === undefined) {
            const version = valid(text) ?? coerce(text);
            versions.set(text, (ok = version !== null && range.test(version)));
          }
          return ok;
        };
  return (item, date) => passes(item, search, inRange, date);
}

function passes(
  item: CatalogItem,
  search: CheckedSearch,
  inRange: (version: string | undefined) => boolean,
  knownDate: number | undefined,
): boolean {
  if (search.kinds !== undefined && !search.kinds.has(item.kind)) return false;
  if (search.spaces !== undefined && !search.spaces.has(item.space)) return false;
  if (!search.includeShadowed && item.shadowedBy !== undefined) return false;
  if (search.signature !== undefined && !search.signature.has(item.signature.state)) return false;
  if (search.category !== undefined) {
    const category = item.category?.toLowerCase();
    if (
      category === undefined ||
      (category !== search.category && !category.startsWith(`${search.category}/`))
    )
      return false;
  }
  for (const wanted of search.tags)
    if (!item.tags.some((t) => t === wanted || t.toLowerCase() === wanted)) return false;
  if (search.version !== undefined && !inRange(item.version)) return false;
  if (search.dateFrom !== undefined || search.dateTo !== undefined) {
    const date = knownDate ?? itemDate(item);
    if (search.dateFrom !== undefined && date < search.dateFrom) return false;
    if (search.dateTo !== undefined && date > search.dateTo) return false;
  }
  return true;
}

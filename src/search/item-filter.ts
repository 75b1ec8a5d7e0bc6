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
  if (search.tags.length > 0) {
    const tags = new Set(item.tags.map((t) => t.toLowerCase()));
    if (!search.tags.every((t) => tags.has(t))) return false;
  }
  if (search.version !== undefined) {
    const version =
      item.version === undefined ? null : (valid(item.version) ?? coerce(item.version));
    if (version === null || !search.version.test(version)) return false;
  }
  if (search.dateFrom !== undefined || search.dateTo !== undefined) {
    const date = itemDate(item);
    if (search.dateFrom !== undefined && date < search.dateFrom) return false;
    if (search.dateTo !== undefined && date > search.dateTo) return false;
  }
  return true;
}

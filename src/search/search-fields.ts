/** The fields of an item that search reads, and how much a match in each counts. */
import type { CatalogItem } from '../items/item-catalog.js';
import type { QueryField } from './query-node.js';

/**
 * How much a match in each field counts, after RYE's search weights (title and name 3,
 * description 2, category 1.5, content 1), with the item id as strong as the name and tags as
 * strong as the category.
 */
export const FIELD_BOOSTS: Readonly<Record<QueryField, number>> = {
  title: 3,
  name: 3,
  id: 3,
  description: 2,
  category: 1.5,
  tags: 1.5,
  content: 1,
};

/** Every searchable field. */
export const SEARCH_FIELDS = Object.keys(FIELD_BOOSTS) as QueryField[];

/** The text of one field of an item: one string per value (a tag each), none when absent. */
export function fieldValues(item: CatalogItem, field: QueryField): string[] {
  switch (field) {
    case 'id':
      return [item.itemId];
    case 'tags':
      return item.tags;
    case 'name':
      return [item.name];
    default: {
      const value = item[field];
      return value === undefined || value === '' ? [] : [value];
    }
  }
}

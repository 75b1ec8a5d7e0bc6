/** Catalog items for search tests. */
import type { CatalogItem } from '../../src/items/item-catalog.js';

/** An item with the fields a test does not care about filled in. */
export function item(itemId: string, fields: Partial<CatalogItem> = {}): CatalogItem {
  return {
    kind: 'tool',
    itemId,
    space: 'project',
    name: itemId.slice(itemId.lastIndexOf('/') + 1),
    tags: [],
    content: '',
    modifiedAt: 1_700_000_000_000,
    signature: { state: 'unsigned' },
    shadows: [],
    file: `/p/.ai/tools/${itemId}.py`,
    ...fields,
  };
}

/**
 * Search without an index: every item is read against the query in turn. The same query
 * language, words, fuzziness, filters and order as {@link ItemIndex} (so both find the same items),
 * with a simpler score: the sum, over the words matched, of the weights of the fields they
 * matched in. The baseline the index is measured against, and a cross-check of it.
 */
import type { CatalogItem } from '../items/item-catalog.js';
import { FilterColumns, itemFilter } from './item-filter.js';
import type { QueryField, QueryNode } from './query-node.js';
import { FIELD_BOOSTS, SEARCH_FIELDS, fieldValues } from './search-fields.js';
import { searchPage, type ScoredItem, type SearchPage } from './search-page.js';
import { checkSearchRequest, type SearchRequest } from './search-request.js';
import { fuzzyDistance, phraseText, searchWords } from './search-words.js';
import { withinEdits } from './within-edits.js';

/**
 * Searches `items` one by one. Throws as {@link checkSearchRequest} does for a bad request.
 */
export function linearSearch(items: readonly CatalogItem[], request: SearchRequest): SearchPage {
  const search = checkSearchRequest(request);
  const columns = new FilterColumns(1);
  const passes = itemFilter(search, columns);
  const found: ScoredItem[] = [];
  for (const item of items) {
    if (passes !== undefined) {
      columns.set(0, item);
      if (!passes(0)) continue;
    }
    const score = new ItemMatcher(item).score(search.tree);
    if (score !== undefined) found.push({ item, score });
  }
  return searchPage(found, search);
}

/** One item against a query; each field's words are read once, when first needed. */
class ItemMatcher {
  private readonly words = new Map<QueryField, string[]>();
  private readonly phrases = new Map<QueryField, string[]>();

  constructor(private readonly item: CatalogItem) {}

  /** The item's score for `node`, or `undefined` when it does not match. */
  score(node: QueryNode): number | undefined {
    switch (node.type) {
      case 'all':
        return 0;
      case 'not':
        return this.score(node.child) === undefined ? 0 : undefined;
      case 'and': {
        let total = 0;
        for (const child of node.children) {
          const s = this.score(child);
          if (s === undefined) return undefined;
          total += s;
        }
        return total;
      }
      case 'or': {
        let total: number | undefined;
        for (const child of node.children) {
          const s = this.score(child);
          if (s !== undefined) total = (total ?? 0) + s;
        }
        return total;
      }
      case 'term':
      case 'phrase': {
        const fields = node.field === undefined ? SEARCH_FIELDS : [node.field];
        let total = 0;
        for (let i = 0; i < node.words.length; i++) {
          const word = node.words[i]!;
          const last = i === node.words.length - 1;
          const test: (w: string) => boolean =
            node.type === 'phrase'
              ? (w) => w === word
              : node.prefix && last
                ? (w) => w.startsWith(word)
                : (w) => withinEdits(word, w, fuzzyDistance(word));
          let matched = 0;
          for (const field of fields)
            if (this.fieldWords(field).some(test)) matched += FIELD_BOOSTS[field];
          if (matched === 0) return undefined;
          total += matched;
        }
        if (node.type === 'phrase') {
          const wanted = phraseText(node.text);
          if (!fields.some((f) => this.fieldPhrases(f).some((t) => t.includes(wanted))))
            return undefined;
        }
        return total;
      }
    }
  }

  private fieldWords(field: QueryField): string[] {
    let words = this.words.get(field);
    if (words === undefined) {
      words = [...new Set(fieldValues(this.item, field).flatMap(searchWords))];
      this.words.set(field, words);
    }
    return words;
  }

  private fieldPhrases(field: QueryField): string[] {
    let texts = this.phrases.get(field);
    if (texts === undefined) {
      texts = fieldValues(this.item, field).map(phraseText);
      this.phrases.set(field, texts);
    }
    return texts;
  }
}

/** The parsed form of a search query (see {@link parseQuery}). */

/** A field a query term may name (`name:deploy`); `tag:` is read as `tags:`. */
export type QueryField = 'name' | 'title' | 'description' | 'category' | 'tags' | 'content' | 'id';

/** Every {@link QueryField}, in the order the query syntax lists them. */
export const QUERY_FIELDS: readonly QueryField[] = [
  'name',
  'title',
  'description',
  'category',
  'tags',
  'content',
  'id',
];

/**
 * A node of a parsed query:
 * - `all`: every item (the empty query, `*`, `field:*`);
 * - `term`: a word, or a few words written together (`rye/core` is `rye` and `core`), each of
 *   which must match a word of the item (in `field` when given); with `prefix`, the last word
 *   matches any word it begins;
 * - `phrase`: `"quoted words"`, which must all match and appear together, in order;
 * - `and`, `or`, `not`: the combinations (never with fewer than two children for `and`/`or`).
 *
 * `words` are the lowercased words the text splits into (see `searchWords`); `column` is where
 * the node starts in the query (1-based).
 */
export type QueryNode =
  | { type: 'all' }
  | {
      type: 'term';
      text: string;
      words: string[];
      prefix: boolean;
      field?: QueryField;
      column: number;
    }
  | { type: 'phrase'; text: string; words: string[]; field?: QueryField; column: number }
  | { type: 'and'; children: QueryNode[] }
  | { type: 'or'; children: QueryNode[] }
  | { type: 'not'; child: QueryNode };

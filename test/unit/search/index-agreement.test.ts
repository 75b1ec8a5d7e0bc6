import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CatalogItem } from '../../../src/items/item-catalog.js';
import { ItemIndex } from '../../../src/search/item-index.js';
import { linearSearch } from '../../../src/search/linear-search.js';
import { item } from '../../support/catalog-item.js';
import type { SearchPage } from '../../../src/search/search-page.js';

/**
 * The index against the plain scan over catalogs large enough that phrases are checked by
 * position (not in each candidate's text), with words that end or begin other words, text
 * with punctuation and odd whitespace, and catalogs that change many times in a row.
 */

const ids = (page: SearchPage) => page.results.map((r) => `${r.space}:${r.itemId}`).sort();

/** Words some of which end or begin others (`the`/`bathe`, `app`/`apply`, `sync`/`synch`). */
const WORDS = [
  'the',
  'bathe',
  'app',
  'apply',
  'deploy',
  'redeploy',
  'deploys',
  'on',
  'python',
  'every',
  'everyone',
  'sync',
  'synch',
  'Ünïcode',
  'ΟΔΟΣ',
];
const SEPARATORS = [
  ...Array<string>(10).fill(' '),
  ...['  ', ', ', '\n', '\n\n', ' - ', ' (', ') ', '/', '\t', '. ', '_', '\u00a0'],
];
const word = fc.constantFrom(...WORDS);
const text = (min: number, max: number) =>
  fc
    .array(fc.tuple(word, fc.constantFrom(...SEPARATORS), fc.boolean()), {
      minLength: min,
      maxLength: max,
    })
    .map((parts) => parts.map(([w, s, upper]) => (upper ? w.toUpperCase() : w) + s).join(''));
const itemFields = fc.record({
  title: text(1, 4),
  description: text(0, 10),
  // Long enough that most items have most words: a phrase has many candidates.
  content: text(20, 40),
  tags: fc.array(word, { maxLength: 3 }),
});
const catalog = (min: number, max: number) =>
  fc
    .array(itemFields, { minLength: min, maxLength: max })
    .map((records) => records.map((fields, i) => item(`t/item${i}`, fields)));

/** A phrase of one to three words with separators as the items have them, maybe a field's. */
const phrase = fc
  .tuple(
    fc.constantFrom('', '', 'content:', 'title:', 'tags:'),
    fc.constantFrom('', '', '(', '- '),
    fc.array(fc.tuple(word, fc.constantFrom(' ', ' ', ' ', ' ', '  ', ', ', '\n', '. ', ' (')), {
      minLength: 1,
      maxLength: 3,
    }),
    fc.constantFrom('', '', ')', '.'),
  )
  .map(([field, before, parts, after]) => {
    const inner = parts.map(([w, s], i) => (i === parts.length - 1 ? w : w + s)).join('');
    return `${field}"${before}${inner}${after}"`;
  });

async function agree(
  own: ItemIndex,
  items: readonly CatalogItem[],
  query: string,
): Promise<number> {
  const request = { query, limit: 100 };
  const indexed = await own.search(request);
  const scanned = linearSearch(items, request);
  expect(indexed.total, query).toBe(scanned.total);
  expect(ids(indexed), query).toEqual(ids(scanned));
  return indexed.total;
}

describe('ItemIndex and linearSearch over many items', () => {
  it('find the same items for phrases, whatever the punctuation and spacing', async () => {
    let asked = 0;
    let matched = 0;
    await fc.assert(
      fc.asyncProperty(
        catalog(40, 100),
        fc.array(phrase, { minLength: 1, maxLength: 6 }),
        async (items, phrases) => {
          const own = new ItemIndex(async () => items);
          for (const q of phrases) {
            asked++;
            if ((await agree(own, items, q)) > 0) matched++;
          }
        },
      ),
      // Seeded: the share of phrases found below is a property of the draws, so the draws are fixed.
      { numRuns: 60, seed: 20261128 },
    );
    // Many of the phrases were found somewhere.
    expect(matched).toBeGreaterThan(asked / 5);
  });

  it('find a phrase whose first word ends a longer word and whose last begins one', async () => {
    const items = Array.from({ length: 40 }, (_, i) =>
      item(`t/filler${i}`, { description: 'the app, then the app again', content: 'app the' }),
    );
    items.push(item('t/inside', { description: 'bathe apply', tags: ['the', 'app'] }));
    const own = new ItemIndex(async () => items);
    expect(await own.search({ query: '"the app"', limit: 100 }).then((p) => p.total)).toBe(41);
    expect(ids(await own.search({ query: '"e app"' }))).toEqual([]);
    expect(ids(await own.search({ query: '"the appl"' }))).toEqual([]);
    expect(ids(await own.search({ query: '"bathe apply"' }))).toEqual(['project:t/inside']);
    expect((await own.search({ query: '"app, then"', limit: 100 })).total).toBe(40);
    expect((await own.search({ query: '"app then"', limit: 100 })).total).toBe(0);
    await agree(own, items, '"the app"');
    await agree(own, items, '"app the"');
  });

  it('follow a catalog that changes many times as a fresh scan would', async () => {
    const step = fc.record({
      removed: fc.array(fc.nat(), { maxLength: 8 }),
      edited: fc.array(fc.tuple(fc.nat(), text(0, 12)), { maxLength: 8 }),
      added: fc.array(itemFields, { maxLength: 12 }),
    });
    const queries = fc.array(
      fc.oneof(
        phrase,
        word,
        word.map((w) => `${w.slice(0, 3)}*`),
        fc.tuple(word, word).map(([a, b]) => `${a} OR ${b}`),
        fc.tuple(word, word).map(([a, b]) => `${a} -${b}`),
      ),
      { minLength: 1, maxLength: 4 },
    );
    await fc.assert(
      fc.asyncProperty(
        catalog(10, 60),
        fc.array(step, { minLength: 1, maxLength: 8 }),
        queries,
        async (first, steps, qs) => {
          let items = first;
          let next = first.length;
          const own = new ItemIndex(async () => items);
          for (const q of qs) await agree(own, items, q);
          for (const { removed, edited, added } of steps) {
            const gone = new Set(removed.map((i) => i % Math.max(items.length, 1)));
            items = items.filter((_, i) => !gone.has(i));
            for (const [i, description] of edited) {
              const at = i % Math.max(items.length, 1);
              const old = items[at];
              if (old !== undefined)
                items[at] = { ...old, description, modifiedAt: old.modifiedAt + 1 };
            }
            items = [...items, ...added.map((fields) => item(`t/item${next++}`, fields))];
            const update = await own.refresh();
            expect(update?.documents).toBe(items.length);
            for (const q of qs) await agree(own, items, q);
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

/**
 * Item search on its inverted index (`ItemIndex`) against a plain scan of the same items
 * (`linearSearch`), over 10,000 generated catalog items: the index's build time, the time it
 * takes to follow a change of a few items, and the latency of a mixed set of about 200 queries
 * (plain words, AND/OR/NOT, phrases, prefixes, typos, field terms, filters) through each.
 */
import type { CatalogItem } from '../src/items/item-catalog.js';
import { ItemIndex } from '../src/search/item-index.js';
import { linearSearch } from '../src/search/linear-search.js';
import type { SearchRequest } from '../src/search/search-request.js';
import { benchRow, withinRounds } from './bench-row.js';
import type { BenchSection } from './bench-section.js';
import { generatedCatalog, generatedQueries } from './generated-catalog.js';
import { median } from './median.js';

/** Goals: the index builds in under a second; 95 % of searches take under 2 ms. */
export const SEARCH_GOALS = { buildUs: 1_000_000, p95Us: 2_000 } as const;

/** The `p`-th percentile (0..1) of `values`, nearest rank. */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** µs of each search of `queries`, one at a time. */
async function latencies(
  queries: readonly SearchRequest[],
  run: (q: SearchRequest) => Promise<unknown> | unknown,
): Promise<number[]> {
  const times: number[] = [];
  for (const q of queries) {
    const t0 = performance.now();
    await run(q);
    times.push((performance.now() - t0) * 1000);
  }
  return times;
}

/** Measures build, update and query latency (see the module comment). */
export async function searchBench(options: {
  rounds: number;
  items?: number;
  queries?: number;
  /** Items changed between two searches, for the update row. */
  changed?: number;
}): Promise<BenchSection> {
  const count = options.items ?? 10_000;
  const changedCount = options.changed ?? 10;
  const items = generatedCatalog(count);
  const queries = generatedQueries(items, options.queries ?? 200);
  // The same items with a few edited, as the catalog returns them after files changed.
  const edited: CatalogItem[] = items.map((item, i) =>
    i % Math.floor(count / changedCount) === 0
      ? { ...item, description: `${item.description} Edited.`, modifiedAt: item.modifiedAt + 1 }
      : item,
  );

  // Both sides must find the same items, or the comparison means nothing.
  const index = new ItemIndex(async () => items);
  let matches = 0;
  for (const q of queries) {
    const [a, b] = [
      await index.search({ ...q, limit: 100 }),
      linearSearch(items, { ...q, limit: 100 }),
    ];
    if (a.total !== b.total)
      throw new Error(`index and scan disagree on ${JSON.stringify(q)}: ${a.total} and ${b.total}`);
    matches += a.total;
  }

  const build: number[] = [];
  const update: number[] = [];
  const indexP50: number[] = [];
  const indexP95: number[] = [];
  const scanP50: number[] = [];
  const scanP95: number[] = [];
  const indexMean: number[] = [];
  const scanMean: number[] = [];
  for (let r = 0; r < options.rounds; r++) {
    let source = items;
    const fresh = new ItemIndex(async () => source);
    const t0 = performance.now();
    await fresh.refresh();
    build.push((performance.now() - t0) * 1000);
    source = edited;
    const t1 = performance.now();
    const done = await fresh.refresh();
    update.push((performance.now() - t1) * 1000);
    if (done?.replaced !== changedCount || done.rebuilt)
      throw new Error(`the update did not replace ${changedCount} items: ${JSON.stringify(done)}`);
    source = items;
    await fresh.refresh();

    const sides = [
      async () => {
        const t = await latencies(queries, (q) => fresh.search(q));
        indexP50.push(median(t));
        indexP95.push(percentile(t, 0.95));
        indexMean.push(t.reduce((s, x) => s + x, 0) / t.length);
      },
      async () => {
        const t = await latencies(queries, (q) => linearSearch(items, q));
        scanP50.push(median(t));
        scanP95.push(percentile(t, 0.95));
        scanMean.push(t.reduce((s, x) => s + x, 0) / t.length);
      },
    ];
    for (const side of r % 2 === 0 ? sides : [...sides].reverse()) await side();
  }

  const ratio = (scan: number, idx: number) => scan / idx;
  const p50Ratio = withinRounds(scanP50, indexP50, ratio);
  const p95Ratio = withinRounds(scanP95, indexP95, ratio);
  const breakEven = withinRounds(
    build,
    indexMean.map((m, i) => scanMean[i]! - m),
    (b, saved) => b / saved,
  );
  const n = count.toLocaleString('en-US');
  return {
    title: 'Item search',
    rows: [
      benchRow(
        `\`ItemIndex\` built over ${n} items (7 fields, words and positions)`,
        build,
        'builds/s',
        `repaid after ${Math.ceil(breakEven)} searches (at the mean time each saves over the scan)`,
        { text: '< 1 s', met: (us) => us < SEARCH_GOALS.buildUs },
      ),
      benchRow(
        `… brought up to date after ${changedCount} of ${n} items changed`,
        update,
        'updates/s',
        `**${withinRounds(build, update, ratio).toFixed(0)}×** faster than a build`,
      ),
      benchRow(
        `\`ItemIndex.search\`, ${queries.length} mixed searches (p50)`,
        indexP50,
        'searches/s',
        `**${p50Ratio.toFixed(0)}×** faster than the scan`,
      ),
      benchRow(
        '… (p95)',
        indexP95,
        'searches/s',
        `**${p95Ratio.toFixed(0)}×** faster than the scan`,
        { text: '< 2 ms', met: (us) => us < SEARCH_GOALS.p95Us },
      ),
      benchRow(
        `\`linearSearch\`, the same searches over the same items (p50)`,
        scanP50,
        'searches/s',
      ),
      benchRow('… (p95)', scanP95, 'searches/s'),
    ],
    notes: [
      `The items are made up by [bench/generated-catalog.ts](../bench/generated-catalog.ts) from a small vocabulary of workflow words (deterministic): names, titles, descriptions of 8 to 16 words, a category, up to four tags and 2 to 5 sentences of text each, 60 % in the project space, 20 % each in the user and system spaces, 1 in 20 shadowed. The ${queries.length} searches are 20 % single words, 12 % two words, 10 % OR, 10 % NOT, 10 % phrases, 10 % prefixes, 10 % words with two letters swapped (found by fuzzy matching), 10 % field terms and 8 % filters (kind, space, category, tags, version range, dates, signature; some with the date or name order); between them they matched ${matches.toLocaleString('en-US')} items (each search's full total). Each search asks for the first page of 10.`,
      `Both sides parse the query, apply the filters, order and page the same way, and find the same items (checked for every search before timing); the scan reads every item's words for every search (splitting its fields into words as it goes, and comparing each query word of four letters or more with each word of the item by edit distance), the index looks the words up. Each round builds a new index, times its update after ${changedCount} items changed (new descriptions: ${changedCount} documents replaced, not a rebuild), then runs all searches through the index and through the scan, one at a time, in alternating order.`,
    ],
  };
}

/**
 * A made-up catalog for the search benchmark: items with names, titles, descriptions,
 * categories, tags and text drawn from a small vocabulary of workflow words and a few hundred
 * made-up names of services and projects (the rarer words a real catalog has, some much more
 * frequent than others), some items shadowed; and a mixed set of searches over them.
 * Deterministic: the same seeds give the same items and searches.
 */
import type { CatalogItem, SignatureState } from '../src/items/item-catalog.js';
import type { ItemKind } from '../src/items/item-kind.js';
import type { SpaceName } from '../src/items/space.js';
import type { SearchRequest } from '../src/search/search-request.js';

const VERBS = [
  'deploy',
  'build',
  'test',
  'release',
  'rollback',
  'sync',
  'fetch',
  'parse',
  'render',
  'sign',
  'verify',
  'index',
  'search',
  'notify',
  'backup',
  'restore',
  'migrate',
  'scale',
  'monitor',
  'lint',
  'format',
  'compile',
  'bundle',
  'upload',
  'download',
  'archive',
  'schedule',
  'review',
  'summarize',
  'translate',
  'classify',
  'export',
  'import',
  'provision',
  'rotate',
  'audit',
];
const NOUNS = [
  'application',
  'service',
  'bucket',
  'database',
  'cluster',
  'container',
  'image',
  'report',
  'invoice',
  'customer',
  'ticket',
  'pipeline',
  'workflow',
  'secret',
  'token',
  'cache',
  'queue',
  'logs',
  'metrics',
  'alert',
  'dashboard',
  'schema',
  'table',
  'record',
  'document',
  'branch',
  'commit',
  'changelog',
  'snapshot',
  'certificate',
  'endpoint',
  'webhook',
  'dataset',
  'model',
];
const CONTEXTS = [
  'aws',
  'gcp',
  'azure',
  'kubernetes',
  'docker',
  'python',
  'typescript',
  'postgres',
  'redis',
  'slack',
  'email',
  'github',
  'staging',
  'production',
  'nightly',
  'weekly',
  'terraform',
  'helm',
];
const FILLER = [
  'the',
  'a',
  'to',
  'from',
  'with',
  'for',
  'and',
  'then',
  'of',
  'on',
  'every',
  'each',
];
const CATEGORIES = [
  'ops/deploy',
  'ops/monitoring',
  'ops/backup',
  'data/etl',
  'data/reports',
  'dev/ci',
  'dev/review',
  'docs/guides',
  'docs/reference',
  'security/keys',
  'billing/invoices',
  'support/tickets',
  'rye/core',
  'rye/agent',
];
const SYLLABLES = [
  'ka',
  'lo',
  'ri',
  'an',
  'tor',
  'vel',
  'mi',
  'so',
  'zen',
  'dar',
  'quo',
  'ix',
  'bel',
  'or',
  'na',
  'thu',
  'pe',
  'gra',
  'mon',
  'sil',
  'ves',
  'ul',
  'cor',
  'fen',
];
const KINDS: ItemKind[] = ['directive', 'tool', 'knowledge'];
const STATES: SignatureState[] = ['verified', 'verified', 'unsigned', 'untrusted', 'tampered'];
const DAY_MS = 86_400_000;
const START = Date.UTC(2023, 0, 1);

/** A small, fast, seeded generator (mulberry32): numbers in [0, 1). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Made-up names of services and projects, two or three syllables each, all different. */
export function madeUpNames(count = 400, seed = 3): string[] {
  const rand = random(seed);
  const names = new Set<string>();
  while (names.size < count) {
    const length = 2 + Math.floor(rand() * 2);
    names.add(
      Array.from({ length }, () => SYLLABLES[Math.floor(rand() * SYLLABLES.length)]!).join(''),
    );
  }
  return [...names];
}

/** `count` items: 60 % project, 20 % user, 20 % system, 1 in 20 shadowed by a higher space. */
export function generatedCatalog(count: number, seed = 1): CatalogItem[] {
  const rand = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const some = <T>(list: readonly T[], min: number, max: number): T[] =>
    Array.from({ length: min + Math.floor(rand() * (max - min + 1)) }, () => pick(list));
  const names = madeUpNames();
  // A few names are frequent, most are rare.
  const someName = () => names[Math.floor(names.length * rand() ** 3)]!;
  const common = [...VERBS, ...NOUNS, ...CONTEXTS];
  const sentence = (min: number, max: number): string =>
    Array.from({ length: min + Math.floor(rand() * (max - min + 1)) }, () => {
      const roll = rand();
      return roll < 0.5 ? pick(common) : roll < 0.85 ? pick(FILLER) : someName();
    }).join(' ');
  const items: CatalogItem[] = [];
  const taken = new Set<string>();
  while (items.length < count) {
    const verb = pick(VERBS);
    const noun = pick(NOUNS);
    const context = rand() < 0.3 ? someName() : pick(CONTEXTS);
    const kind = pick(KINDS);
    const category = pick(CATEGORIES);
    let itemId = `${category}/${verb}_${noun}`;
    for (let n = 2; taken.has(`${kind}:${itemId}`); n++)
      itemId = `${category}/${verb}_${noun}_${context}${n > 2 ? n : ''}`;
    taken.add(`${kind}:${itemId}`);
    const roll = rand();
    const space: SpaceName = roll < 0.6 ? 'project' : roll < 0.8 ? 'user' : 'system';
    const created = new Date(START + Math.floor(rand() * 1000) * DAY_MS).toISOString();
    const item: CatalogItem = {
      kind,
      itemId,
      space,
      file: `/work/${space}/.ai/${kind}s/${itemId}.md`,
      name: itemId.slice(itemId.lastIndexOf('/') + 1),
      title: `${cap(verb)} the ${noun} on ${context}`,
      description: `${cap(verb)} the ${noun} ${sentence(6, 14)}.`,
      category,
      version: `${1 + Math.floor(rand() * 3)}.${Math.floor(rand() * 10)}.${Math.floor(rand() * 10)}`,
      tags: [...new Set([context, ...some(CONTEXTS, 0, 3)])],
      ...(kind === 'knowledge' ? { updatedAt: created } : { createdAt: created }),
      content: Array.from(
        { length: 2 + Math.floor(rand() * 4) },
        () => `${sentence(12, 40)}.`,
      ).join('\n\n'),
      modifiedAt: Date.parse(created) + DAY_MS,
      signature: { state: pick(STATES) },
      shadows: [],
    };
    items.push(item);
    // One in twenty also exists, older, in a lower space, hidden by this one.
    if (space !== 'system' && rand() < 0.05 && items.length < count) {
      const lower: SpaceName = space === 'project' ? 'user' : 'system';
      item.shadows.push(lower);
      items.push({
        ...item,
        space: lower,
        file: `/work/${lower}/.ai/${kind}s/${itemId}.md`,
        description: `${item.description} (an older copy)`,
        shadowedBy: space,
        shadows: [],
      });
    }
  }
  return items;
}

function cap(word: string): string {
  return word[0]!.toUpperCase() + word.slice(1);
}

/**
 * A mixed set of about `count` searches over `items`: 20 % single words, 12.5 % two words, 10 %
 * OR, 7.5 % NOT, 2.5 % a group and a -word, 10 % phrases (two words of an item's description),
 * 10 % prefixes, 10 % words with two letters swapped, 10 % field terms and 7.5 % filters (some
 * with a query, some sorted by date or name). Three words in ten are made-up names.
 */
export function generatedQueries(
  items: readonly CatalogItem[],
  count = 200,
  seed = 2,
): SearchRequest[] {
  const rand = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const word = () => pick([...VERBS, ...NOUNS, ...CONTEXTS]);
  const long = () => pick([...VERBS, ...NOUNS].filter((w) => w.length >= 6));
  const typo = (w: string) => `${w.slice(0, 2)}${w[3]}${w[2]}${w.slice(4)}`;
  const phrase = () => {
    const words = pick(items).description!.replace(/[.()]/g, '').split(' ');
    const at = Math.floor(rand() * (words.length - 1));
    return `"${words[at]} ${words[at + 1]}"`;
  };
  const makers: [number, () => SearchRequest][] = [
    [40, () => ({ query: word() })],
    [25, () => ({ query: `${word()} ${word()}` })],
    [20, () => ({ query: `${word()} OR ${word()}` })],
    [15, () => ({ query: `${word()} NOT ${word()}` })],
    [5, () => ({ query: `(${word()} OR ${word()}) -${pick(CONTEXTS)}` })],
    [20, () => ({ query: phrase() })],
    [20, () => ({ query: `${word().slice(0, 4)}*` })],
    [20, () => ({ query: typo(long()) })],
    [
      20,
      () => ({
        query: `${pick(['title', 'name', 'description', 'tags', 'category'])}:${pick([...VERBS, ...CONTEXTS])}`,
      }),
    ],
    [
      15,
      () =>
        pick<SearchRequest>([
          { query: word(), kinds: [pick(KINDS)] },
          { query: word(), spaces: ['project'], includeShadowed: false },
          { query: '', category: pick(CATEGORIES).split('/')[0]!, sort: 'date' },
          { query: word(), tags: [pick(CONTEXTS)], sort: 'name' },
          { query: word(), version: '^2.0.0' },
          { query: word(), dateFrom: '2024-01-01', dateTo: '2024-06-30' },
          { query: `${word()} OR ${word()}`, signature: ['verified'] },
        ]),
    ],
  ];
  const total = makers.reduce((n, [share]) => n + share, 0);
  return makers.flatMap(([share, make]) =>
    Array.from({ length: Math.round((share * count) / total) }, make),
  );
}

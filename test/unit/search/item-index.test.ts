import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { DirigentError } from '../../../src/errors/dirigent-error.js';
import { ErrorCode } from '../../../src/errors/error-codes.js';
import { ItemCatalog, type CatalogItem } from '../../../src/items/item-catalog.js';
import { ItemResolver } from '../../../src/items/item-resolver.js';
import { TrustStore } from '../../../src/items/signing/trust-store.js';
import type { Space } from '../../../src/items/space.js';
import { ItemIndex } from '../../../src/search/item-index.js';
import { linearSearch } from '../../../src/search/linear-search.js';
import { item } from '../../support/catalog-item.js';
import type { SearchPage } from '../../../src/search/search-page.js';
import type { SearchRequest } from '../../../src/search/search-request.js';
import { waitFor } from '../../support/wait-for.js';

const ITEMS: CatalogItem[] = [
  item('ops/deploy_app', {
    title: 'Deploy the app',
    description: 'Deploy the application to production on AWS',
    category: 'ops/release',
    tags: ['deploy', 'aws'],
    version: '1.4.0',
    content: 'Builds the bundle, uploads it to the bucket, then deploys it.',
    createdAt: '2025-03-10',
    signature: { state: 'verified' },
  }),
  item('ops/rollback', {
    description: 'Roll back the last release',
    category: 'ops/release',
    tags: ['release', 'aws'],
    version: '2.0.0',
    createdAt: '2025-01-05',
  }),
  item('ops/status', {
    kind: 'directive',
    description: 'Report the status of every service',
    category: 'ops',
    version: '0.9.1',
    createdAt: '2024-11-20',
  }),
  item('guides/quickstart', {
    kind: 'knowledge',
    name: 'quickstart',
    title: 'Quick start',
    description: 'How to start a project from scratch',
    category: 'guides',
    tags: ['docs'],
    content: 'Run the init directive, then deploy the app with one command.',
    updatedAt: '2025-02-01',
    signature: { state: 'tampered' },
  }),
  item('guides/quickstart', {
    kind: 'knowledge',
    space: 'user',
    name: 'quickstart',
    title: 'Quick start (old)',
    description: 'An older guide to starting',
    category: 'guides',
    shadowedBy: 'project',
    modifiedAt: 1_600_000_000_000,
  }),
  item('util/echo', {
    space: 'system',
    description: 'Echo its parameters',
    category: 'util',
    type: 'builtin',
    modifiedAt: 0,
    signature: { state: 'builtin' },
    file: undefined,
  }),
];
ITEMS[3]!.shadows = ['user'];

const index = new ItemIndex(async () => ITEMS);
const ids = (page: SearchPage) => page.results.map((r) => `${r.space}:${r.itemId}`);
const find = async (query: string, request: SearchRequest = {}) =>
  ids(await index.search({ ...request, query }));
const failure = async (request: SearchRequest): Promise<DirigentError> => {
  try {
    await index.search(request);
  } catch (err) {
    expect(err).toBeInstanceOf(DirigentError);
    return err as DirigentError;
  }
  throw new Error('the search succeeded');
};

describe('ItemIndex: the query', () => {
  it('lists every item for the empty query and for *', async () => {
    expect((await index.search({})).total).toBe(6);
    expect((await index.search({ query: '*' })).total).toBe(6);
  });

  it('matches words anywhere, in any case, and needs every word', async () => {
    expect(await find('AWS')).toEqual(['project:ops/deploy_app', 'project:ops/rollback']);
    expect(await find('aws production')).toEqual(['project:ops/deploy_app']);
  });

  it('ranks a match in the title or name above one in the content', async () => {
    const page = await index.search({ query: 'deploy' });
    expect(ids(page)).toEqual(['project:ops/deploy_app', 'project:guides/quickstart']);
    expect(page.results[0]!.score).toBe(1);
    expect(page.results[1]!.score).toBeGreaterThan(0);
    expect(page.results[1]!.score).toBeLessThan(1);
  });

  it('OR takes either side, AND both, NOT and -word leave out', async () => {
    expect(await find('rollback OR status')).toHaveLength(2);
    expect(await find('aws AND back')).toEqual(['project:ops/rollback']);
    expect(await find('aws NOT production')).toEqual(['project:ops/rollback']);
    expect(await find('aws -production')).toEqual(['project:ops/rollback']);
    expect((await index.search({ query: 'NOT aws' })).total).toBe(4);
  });

  it('groups with parentheses', async () => {
    expect(await find('(rollback OR status) release')).toEqual(['project:ops/rollback']);
    expect(await find('(start OR echo) -older', { sort: 'name' })).toEqual([
      'system:util/echo',
      'project:guides/quickstart',
    ]);
  });

  it('matches a phrase only with its words together and in order', async () => {
    expect(await find('"deploy the app"')).toEqual([
      'project:ops/deploy_app',
      'project:guides/quickstart',
    ]);
    expect(await find('"the app deploy"')).toEqual([]);
    expect(await find('"Deploy   THE app" -aws')).toEqual(['project:guides/quickstart']);
  });

  it('matches the beginning of words with a trailing *', async () => {
    expect(await find('roll*')).toEqual(['project:ops/rollback']);
    expect(await find('quick*', { sort: 'name' })).toEqual([
      'project:guides/quickstart',
      'user:guides/quickstart',
    ]);
  });

  it('forgives a typo in a word of four characters or more, not in a shorter one', async () => {
    expect(await find('deplyo')).toContain('project:ops/deploy_app');
    expect(await find('rolbak')).toEqual(['project:ops/rollback']);
    expect(await find('awz')).toEqual([]);
  });

  it('looks only in the field a field term names', async () => {
    expect(await find('title:deploy')).toEqual(['project:ops/deploy_app']);
    expect(await find('content:deploy', { sort: 'name' })).toEqual([
      'project:ops/deploy_app',
      'project:guides/quickstart',
    ]);
    expect(await find('name:status')).toEqual(['project:ops/status']);
    expect(await find('description:scratch')).toEqual(['project:guides/quickstart']);
    expect(await find('category:util')).toEqual(['system:util/echo']);
    expect(await find('tags:docs')).toEqual(['project:guides/quickstart']);
    expect(await find('tag:release')).toEqual(['project:ops/rollback']);
    expect(await find('id:ops/status')).toEqual(['project:ops/status']);
    expect(await find('title:"quick start (old)"')).toEqual(['user:guides/quickstart']);
    expect(await find('description:rol*')).toEqual(['project:ops/rollback']);
    expect(await find('tags:production')).toEqual([]);
  });

  it('refuses a malformed query with INVALID_QUERY and where it went wrong', async () => {
    const err = await failure({ query: 'deploy AND (aws' });
    expect(err.code).toBe(ErrorCode.INVALID_QUERY);
    expect(err.message).toContain('column 12');
    expect(err.hint).toContain('Query syntax');
    expect((await failure({ query: 'colour:red' })).code).toBe(ErrorCode.INVALID_QUERY);
  });
});

describe('ItemIndex: filters', () => {
  it('by kind and by space', async () => {
    expect(await find('', { kinds: ['knowledge'] })).toEqual([
      'project:guides/quickstart',
      'user:guides/quickstart',
    ]);
    expect(await find('', { kinds: ['directive', 'knowledge'], spaces: ['project'] })).toEqual([
      'project:guides/quickstart',
      'project:ops/status',
    ]);
    expect(await find('', { spaces: ['system'] })).toEqual(['system:util/echo']);
  });

  it('by category, or a prefix of it in whole segments', async () => {
    expect(await find('', { category: 'ops/release' })).toEqual([
      'project:ops/deploy_app',
      'project:ops/rollback',
    ]);
    expect((await index.search({ category: 'ops' })).total).toBe(3);
    expect((await index.search({ category: 'op' })).total).toBe(0);
    expect((await index.search({ category: 'OPS/' })).total).toBe(3);
  });

  it('by tags, all of which must be present', async () => {
    expect((await index.search({ tags: ['aws'] })).total).toBe(2);
    expect(await find('', { tags: ['AWS', 'deploy'] })).toEqual(['project:ops/deploy_app']);
  });

  it('by a semver range of the version (items without one are left out)', async () => {
    expect(await find('', { version: '^1.0.0' })).toEqual(['project:ops/deploy_app']);
    expect(await find('', { version: '>=0.9 <2' })).toEqual([
      'project:ops/deploy_app',
      'project:ops/status',
    ]);
    expect((await index.search({ version: '*' })).total).toBe(3);
  });

  it('by date: createdAt, else updatedAt, else when the file changed; both ends included', async () => {
    expect(await find('', { dateFrom: '2025-01-05', dateTo: '2025-02-01' })).toEqual([
      'project:guides/quickstart',
      'project:ops/rollback',
    ]);
    expect(await find('', { dateTo: '2021-01-01' })).toEqual([
      'user:guides/quickstart',
      'system:util/echo',
    ]);
    expect(await find('', { dateFrom: '2025-03-10T00:00:00Z' })).toEqual([
      'project:ops/deploy_app',
    ]);
  });

  it('by signature state', async () => {
    expect(await find('', { signature: ['verified', 'tampered'] })).toEqual([
      'project:guides/quickstart',
      'project:ops/deploy_app',
    ]);
    expect(await find('', { signature: ['builtin'] })).toEqual(['system:util/echo']);
  });

  it('lists shadowed items, marked, unless told not to', async () => {
    const page = await index.search({ query: 'quickstart' });
    expect(page.results.map((r) => [r.space, r.shadowed, r.shadowedBy, r.shadows])).toEqual([
      ['project', false, undefined, ['user']],
      ['user', true, 'project', []],
    ]);
    expect(await find('quickstart', { includeShadowed: false })).toEqual([
      'project:guides/quickstart',
    ]);
  });

  it('combines filters with the query', async () => {
    expect(await find('back OR status', { kinds: ['tool'], tags: ['aws'] })).toEqual([
      'project:ops/rollback',
    ]);
  });

  it.each<[SearchRequest, string]>([
    [{ sort: 'size' as never }, 'sort'],
    [{ limit: 0 }, 'limit'],
    [{ limit: 101 }, 'limit'],
    [{ limit: 2.5 }, 'limit'],
    [{ offset: -1 }, 'offset'],
    [{ version: 'newest' }, 'version'],
    [{ dateFrom: '31/01/2025' }, 'dateFrom'],
    [{ dateTo: '2025-02-30' }, 'dateTo'],
    [{ dateFrom: '2025-02-01', dateTo: '2025-01-01' }, 'dateFrom'],
    [{ kinds: ['macro' as never] }, 'kinds'],
    [{ spaces: ['global' as never] }, 'spaces'],
    [{ signature: ['signed' as never] }, 'signature'],
    [{ tags: 'aws' as never }, 'tags'],
  ])('refuses %j with INVALID_REQUEST and a hint', async (request, parameter) => {
    const err = await failure(request);
    expect(err.code).toBe(ErrorCode.INVALID_REQUEST);
    expect(err.details).toEqual({ parameter });
    expect(err.message).toContain(parameter);
    expect(err.hint).toMatch(/^Give /);
  });
});

describe('ItemIndex: order and pages', () => {
  it('sorts by score, then project, user, system, then item id', async () => {
    const same = (itemId: string, space: CatalogItem['space']) =>
      item(itemId, { space, name: 'same', description: 'twin' });
    const twins = new ItemIndex(async () => [
      same('t/b', 'system'),
      same('t/b', 'project'),
      item('t/z', { description: 'twin twin twin, the best match' }),
      same('t/b', 'user'),
      same('t/a', 'project'),
    ]);
    expect(await twins.search({ query: 'twin' }).then(ids)).toEqual([
      'project:t/z',
      'project:t/a',
      'project:t/b',
      'user:t/b',
      'system:t/b',
    ]);
    expect(await find('')).toEqual([
      'project:guides/quickstart',
      'project:ops/deploy_app',
      'project:ops/rollback',
      'project:ops/status',
      'user:guides/quickstart',
      'system:util/echo',
    ]);
  });

  it('sorts by date, newest first', async () => {
    expect(await find('', { sort: 'date' })).toEqual([
      'project:ops/deploy_app',
      'project:guides/quickstart',
      'project:ops/rollback',
      'project:ops/status',
      'user:guides/quickstart',
      'system:util/echo',
    ]);
  });

  it('sorts by name, ignoring case', async () => {
    const named = [item('b/Zeta'), item('a/alpha'), item('c/Beta')];
    const page = await new ItemIndex(async () => named).search({ sort: 'name' });
    expect(page.results.map((r) => r.name)).toEqual(['alpha', 'Beta', 'Zeta']);
  });

  it('pages with offset and limit, and counts every match in total', async () => {
    const all = await find('', { limit: 100 });
    const first = await index.search({ limit: 4 });
    const second = await index.search({ limit: 4, offset: 4 });
    expect(first).toMatchObject({ total: 6, limit: 4, offset: 0, query: '' });
    expect(second).toMatchObject({ total: 6, limit: 4, offset: 4 });
    expect([...ids(first), ...ids(second)]).toEqual(all);
    expect((await index.search({ offset: 10 })).results).toEqual([]);
    expect((await index.search({})).limit).toBe(10);
  });

  it('returns the descriptive fields of a hit, without its text', async () => {
    const [hit] = (await index.search({ query: 'id:deploy_app' })).results;
    expect(hit).toEqual({
      itemId: 'ops/deploy_app',
      kind: 'tool',
      space: 'project',
      name: 'deploy_app',
      title: 'Deploy the app',
      description: 'Deploy the application to production on AWS',
      category: 'ops/release',
      version: '1.4.0',
      tags: ['deploy', 'aws'],
      score: 1,
      signature: 'verified',
      shadowed: false,
      shadows: [],
      modifiedAt: 1_700_000_000_000,
      file: '/p/.ai/tools/ops/deploy_app.py',
    });
  });
});

describe('ItemIndex: following the items', () => {
  it('adds, replaces and discards only what changed', async () => {
    let items = Array.from({ length: 10 }, (_, i) => item(`t/tool${i}`, { description: 'plain' }));
    const own = new ItemIndex(async () => items);
    expect((await own.search({ query: 'plain' })).total).toBe(10);
    expect(own.lastUpdate).toEqual({
      rebuilt: true,
      added: 10,
      replaced: 0,
      discarded: 0,
      documents: 10,
    });

    items = items.map((it, i) =>
      i === 3 ? { ...it, description: 'special', modifiedAt: it.modifiedAt + 1 } : { ...it },
    );
    items.splice(5, 1);
    items.push(item('t/extra', { description: 'special' }));
    expect(await own.refresh()).toEqual({
      rebuilt: false,
      added: 1,
      replaced: 1,
      discarded: 1,
      documents: 10,
    });
    expect(ids(await own.search({ query: 'special' })).sort()).toEqual([
      'project:t/extra',
      'project:t/tool3',
    ]);
    expect((await own.search({ query: 'plain' })).total).toBe(8);
    expect(await own.search({ limit: 100 }).then(ids)).not.toContain('project:t/tool5');
    expect(await own.refresh()).toBeUndefined();
  });

  it('uses a new signature state or shadowing without reindexing the text', async () => {
    let items = [item('t/a'), item('t/b')];
    const own = new ItemIndex(async () => items);
    await own.refresh();
    items = [{ ...items[0]!, signature: { state: 'verified' } }, items[1]!];
    expect(await own.search({ signature: ['verified'] }).then(ids)).toEqual(['project:t/a']);
    expect(own.lastUpdate).toMatchObject({ rebuilt: false, added: 0, replaced: 0, discarded: 0 });
  });

  it('builds itself again when most items changed', async () => {
    let items = [item('t/a'), item('t/b'), item('t/c')];
    const own = new ItemIndex(async () => items);
    await own.refresh();
    items = [item('t/d'), item('t/e'), item('t/c')];
    expect(await own.refresh()).toMatchObject({ rebuilt: true, documents: 3 });
    expect(await own.search({ query: 'id:d OR id:e OR id:a' }).then(ids)).toEqual([
      'project:t/d',
      'project:t/e',
    ]);
  });
});

describe('ItemIndex against a project on disk', () => {
  let dirs: string[] = [];
  let resolver: ItemResolver | undefined;
  afterEach(() => {
    resolver?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    dirs = [];
  });

  function put(root: string, path: string, text: string): string {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  }
  const directive = (description: string) =>
    '# Deploy app\n\n```xml\n<directive name="deploy_app" version="1.2.0">\n' +
    `  <metadata>\n    <description>${description}</description>\n` +
    '    <category>ops</category>\n    <tags><tag>deploy</tag><tag>aws</tag></tags>\n' +
    '  </metadata>\n  <process><step name="s"><instruction>Go</instruction></step></process>\n' +
    '</directive>\n```\n';

  it('finds items of every kind and space, and sees a file edited on disk', async () => {
    const [project, user, system] = ['project', 'user', 'system'].map((n) => {
      const d = mkdtempSync(join(tmpdir(), `dirigent-search-${n}-`));
      dirs.push(d);
      return join(d, '.ai');
    }) as [string, string, string];
    const spaces: Space[] = [
      { name: 'project', root: project },
      { name: 'user', root: user },
      { name: 'system', root: system },
    ];
    const file = put(project, 'directives/ops/deploy_app.md', directive('Ship the service'));
    put(
      project,
      'tools/ops/rollback.py',
      '__version__ = "1.0.0"\n__tool_type__ = "python"\n' +
        '__tool_description__ = "Roll back the last release"\n\nprint("rollback")\n',
    );
    const guide =
      '---\nname: quickstart\ntitle: Quick start\ndescription: Start a project\n' +
      'category: guides\ntags: [docs]\ncreated_at: 2025-02-01\n---\n\nRun the init directive.\n';
    put(project, 'knowledge/guides/quickstart.md', guide);
    put(user, 'knowledge/guides/quickstart.md', guide.replace('Start a project', 'Older guide'));
    put(system, 'tools/util/echo.py', '"""Echo its parameters."""\n__version__ = "0.1.0"\n');
    resolver = new ItemResolver(spaces);
    const index = new ItemIndex(new ItemCatalog(resolver, new TrustStore(spaces)));

    expect(await index.search({ sort: 'name', limit: 100 }).then(ids)).toEqual([
      'project:ops/deploy_app',
      'system:util/echo',
      'project:guides/quickstart',
      'user:guides/quickstart',
      'project:ops/rollback',
    ]);
    expect(await index.search({ query: 'ship' }).then(ids)).toEqual(['project:ops/deploy_app']);
    expect(await index.search({ query: 'rollbak' }).then(ids)).toEqual(['project:ops/rollback']);
    expect(await index.search({ query: 'docs', includeShadowed: false }).then(ids)).toEqual([
      'project:guides/quickstart',
    ]);
    const [shadowed] = (await index.search({ query: 'older' })).results;
    expect(shadowed).toMatchObject({ space: 'user', shadowed: true, shadowedBy: 'project' });

    writeFileSync(file, directive('Launch the rockets'));
    const found = await waitFor(
      async () => {
        const hits = ids(await index.search({ query: 'rockets' }));
        return hits.length > 0 && hits;
      },
      { what: 'the edited directive to be found by its new text', timeoutMs: 5000 },
    );
    expect(found).toEqual(['project:ops/deploy_app']);
    expect(await index.search({ query: 'ship' }).then((p) => p.total)).toBe(0);
    expect(index.lastUpdate).toMatchObject({ rebuilt: false, replaced: 1 });
  });
});

describe('linearSearch', () => {
  const VOCABULARY = [
    'deploy',
    'deploys',
    'employ',
    'release',
    'relapse',
    'bucket',
    'rocket',
    'app',
    'api',
    'aws',
    'the',
    'to',
    'sync',
    'synch',
    'data',
    'date',
    'guide',
    'quick',
    'start',
    'stars',
  ];
  const word = fc.constantFrom(...VOCABULARY);
  const words = (min: number, max: number) =>
    fc.array(word, { minLength: min, maxLength: max }).map((w) => w.join(' '));
  const catalogItems = fc
    .array(
      fc.record({
        kind: fc.constantFrom('directive' as const, 'tool' as const, 'knowledge' as const),
        space: fc.constantFrom('project' as const, 'user' as const, 'system' as const),
        name: fc.array(word, { minLength: 1, maxLength: 2 }).map((w) => w.join('_')),
        title: fc.option(words(1, 4), { nil: undefined }),
        description: fc.option(words(2, 8), { nil: undefined }),
        category: fc.option(
          fc.array(word, { minLength: 1, maxLength: 2 }).map((w) => w.join('/')),
          {
            nil: undefined,
          },
        ),
        tags: fc.array(word, { maxLength: 3 }),
        content: words(0, 20),
      }),
      { maxLength: 30 },
    )
    .map((records) =>
      records.map(({ title, description, category, ...r }, i) =>
        item(`${category ?? 'misc'}/${r.name}${i}`, {
          ...r,
          ...(title !== undefined && { title }),
          ...(description !== undefined && { description }),
          ...(category !== undefined && { category }),
        }),
      ),
    );
  const typo = word.map((w) => (w.length >= 4 ? `${w.slice(0, 2)}${w[3]}${w[2]}${w.slice(4)}` : w));
  const leaf = fc.oneof(
    word,
    typo,
    word.map((w) => `${w.slice(0, 3)}*`),
    words(2, 3).map((w) => `"${w}"`),
    fc
      .tuple(
        fc.constantFrom('name', 'title', 'description', 'category', 'tags', 'content', 'id'),
        word,
      )
      .map(([f, w]) => `${f}:${w}`),
  );
  const query = fc.letrec<{ q: string }>((tie) => ({
    q: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.tuple(tie('q'), tie('q')).map(([a, b]) => `(${a} ${b})`),
      fc.tuple(tie('q'), tie('q')).map(([a, b]) => `(${a} OR ${b})`),
      fc.tuple(tie('q'), tie('q')).map(([a, b]) => `${a} AND NOT ${b}`),
      tie('q').map((a) => `-(${a})`),
    ),
  })).q;

  it('finds the same items as the index for any query, typos and phrases included', async () => {
    let matched = 0;
    await fc.assert(
      fc.asyncProperty(
        catalogItems,
        fc.array(query, { minLength: 1, maxLength: 5 }),
        async (items, queries) => {
          const own = new ItemIndex(async () => items);
          for (const q of queries) {
            const request = { query: q, limit: 100 };
            const indexed = (await own.search(request)).results.map(
              (r) => `${r.space}:${r.itemId}`,
            );
            const scanned = linearSearch(items, request).results.map(
              (r) => `${r.space}:${r.itemId}`,
            );
            expect(indexed.sort(), q).toEqual(scanned.sort());
            if (indexed.length > 0 && indexed.length < items.length) matched++;
          }
        },
      ),
      { numRuns: 200 },
    );
    // The queries were not all trivial: many matched some items but not all.
    expect(matched).toBeGreaterThan(100);
  });

  it('refuses what the index refuses, with the same codes', () => {
    expect(() => linearSearch(ITEMS, { query: '(a' })).toThrow(
      expect.objectContaining({ code: ErrorCode.INVALID_QUERY }),
    );
    expect(() => linearSearch(ITEMS, { limit: 500 })).toThrow(
      expect.objectContaining({ code: ErrorCode.INVALID_REQUEST }),
    );
  });

  it('applies the same filters, order and pages', async () => {
    const request: SearchRequest = {
      query: 'deploy OR aws',
      tags: ['aws'],
      sort: 'name',
      limit: 1,
      offset: 1,
    };
    const scanned = linearSearch(ITEMS, request);
    expect(scanned).toMatchObject({ total: 2, limit: 1, offset: 1, query: 'deploy OR aws' });
    expect(ids(scanned)).toEqual(ids(await index.search(request)));
  });
});

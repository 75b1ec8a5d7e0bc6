/**
 * Every example in `directives/` runs through the real embedded engine (ItemDispatcher with the
 * example tools of `.ai/tools/examples/`, MemoryRunStore) and its run record is checked: status, the steps in the order they ended with
 * their statuses (and attempts where they matter), the outputs, and, for a waiting run, the
 * signals that resume it. A file in `directives/` without a row here fails the suite.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectiveLoader } from '../src/engine/directive-loader.js';
import { loadProjectPolicy } from '../src/policy/project-policy.js';
import { Engine } from '../src/engine/engine.js';
import { MemoryRunStore } from '../src/engine/memory-run-store.js';
import type { RunRecord, RunStatus, StepEntry } from '../src/engine/run-record.js';
import { ItemDispatcher } from '../src/tools/item-dispatcher.js';
import { serveExamplePages, type ExampleServer } from '../src/tools/serve-example-pages.js';
import type { ServedPage } from '../src/tools/tool-example.js';

const DIRECTIVES = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'directives');
const FILES = readdirSync(DIRECTIVES)
  .filter((f) => f.endsWith('.md'))
  .sort();

/**
 * An expected step entry: `"name"` (completed, any attempts), `"name:status"` or
 * `"name:status:attempts"`. A nested array is a group of entries that may end in any order
 * (parallel branches).
 */
type StepSpec = string | string[];

interface SignalSpec {
  name: string;
  payload: unknown;
  /** The signals the run waits for afterwards; omit when the run ends. */
  waitsFor?: string[];
}

interface Row {
  /** File name in `directives/`. */
  file: string;
  /** What the row shows (test title). */
  title: string;
  inputs: Record<string, unknown>;
  /** Signals the run waits for right after it starts. */
  waitsFor?: string[];
  /** Signals sent one after another with `engine.signal`. */
  signals?: SignalSpec[];
  status: RunStatus;
  steps: StepSpec[];
  outputs?: Record<string, unknown> | null;
  error?: { code: string; step: string | null };
  /** Extra checks of the final record. */
  check?: (record: RunRecord) => void;
  /**
   * Pages served on 127.0.0.1 while the row runs: the scratch project's network policy opens
   * that address, and `DIRIGENT_EXAMPLE_SITE` names the server (`http://127.0.0.1:<port>`).
   */
  site?: Record<string, ServedPage>;
}

/** The network policy a row with a `site` gets, opening the loopback address its server is on. */
const SITE_POLICY = join('.ai', 'config', 'network.yaml');

const ROWS: Row[] = [
  {
    file: 'hello.md',
    title: 'the default input',
    inputs: {},
    status: 'completed',
    steps: ['greet'],
    outputs: { greeting: 'Hello, world!' },
  },
  {
    file: 'hello.md',
    title: 'a given name',
    inputs: { name: 'Ada' },
    status: 'completed',
    steps: ['greet'],
    outputs: { greeting: 'Hello, Ada!' },
  },
  {
    file: 'branch_and_loop.md',
    title: 'defaults: the guarded step is skipped, the loop runs three times',
    inputs: {},
    status: 'completed',
    steps: ['start', 'announce:skipped', 'tick', 'tick', 'tick', 'report'],
    outputs: { count: 3, seen: [1, 2, 3], summary: 'Counted 3 in quiet mode.', announced: false },
  },
  {
    file: 'branch_and_loop.md',
    title: 'mode=loud runs the guarded step; rounds given as a string is coerced',
    inputs: { mode: 'loud', rounds: '5' },
    status: 'completed',
    steps: ['start', 'announce', 'tick', 'tick', 'tick', 'tick', 'tick', 'report'],
    outputs: {
      count: 5,
      seen: [1, 2, 3, 4, 5],
      summary: 'Counted 5 in loud mode.',
      announced: true,
    },
  },
  {
    file: 'branch_and_loop.md',
    title: 'rounds=1: the <otherwise> edge is taken after the first pass',
    inputs: { rounds: 1 },
    status: 'completed',
    steps: ['start', 'announce:skipped', 'tick', 'report'],
    outputs: { count: 1, seen: [1], summary: 'Counted 1 in quiet mode.', announced: false },
  },
  {
    file: 'foreach_parallel.md',
    title: 'the default words, results in input order',
    inputs: {},
    status: 'completed',
    steps: ['measure', 'label'],
    outputs: {
      lengths: [9, 5, 5, 5, 4],
      labels: ['0: orchestra', '1: score', '2: baton', '3: tempo', '4: coda'],
      total: 28,
      longest: 'orchestra',
    },
  },
  {
    file: 'foreach_parallel.md',
    title: 'an array given as JSON text',
    inputs: { words: '["a","bb","ccc"]' },
    status: 'completed',
    steps: ['measure', 'label'],
    outputs: { lengths: [1, 2, 3], labels: ['0: a', '1: bb', '2: ccc'], total: 6, longest: 'ccc' },
  },
  {
    file: 'parallel_branches.md',
    title: 'a failing branch does not stop the others (on_failure="continue")',
    inputs: {},
    status: 'completed',
    steps: [['count_words', 'upper', 'measure', 'no_todos:failed:1'], 'inspect', 'report'],
    outputs: {
      words: 6,
      loud: 'DIRIGENT RUNS DIRECTIVES TODO WRITE MORE',
      loud_length: 40,
      branches: { count: 'completed', shout: 'completed', lint: 'failed' },
      report: '6 words; lint failed',
    },
    check: (r) => {
      const failed = r.steps.find((s) => s.name === 'no_todos');
      expect(failed?.error?.code).toBe('COMMAND_FAILED');
      expect(failed?.error?.message).toContain('the text still has a TODO');
      // Inside a branch, steps keep their order.
      expect(r.steps.findIndex((s) => s.name === 'upper')).toBeLessThan(
        r.steps.findIndex((s) => s.name === 'measure'),
      );
    },
  },
  {
    file: 'parallel_branches.md',
    title: 'every branch succeeds',
    inputs: { text: 'All done here' },
    status: 'completed',
    steps: [['count_words', 'upper', 'measure', 'no_todos'], 'inspect', 'report'],
    outputs: {
      words: 3,
      loud: 'ALL DONE HERE',
      loud_length: 13,
      branches: { count: 'completed', shout: 'completed', lint: 'completed' },
      report: '3 words; lint completed',
    },
  },
  {
    file: 'retry_and_recover.md',
    title: 'retries until the flaky step succeeds; on_error recovers the failing one',
    inputs: {},
    status: 'completed',
    steps: ['scratch', 'prepare', 'flaky:completed:3', 'deploy:failed:2', 'recover', 'cleanup'],
    outputs: {
      succeeded_on: 3,
      flaky_attempts: 3,
      deploy_attempts: 2,
      outcome: expect.stringMatching(
        /^Deploy skipped: bash command .* exited with code 7; stderr ends:\n\s*registry unreachable$/,
      ),
      error_code: 'COMMAND_FAILED',
    },
    check: (r) => expect(r.steps.map((s) => s.name)).not.toContain('celebrate'),
  },
  {
    file: 'retry_and_recover.md',
    title: 'no failures: the first attempt succeeds',
    inputs: { failures: 0 },
    status: 'completed',
    steps: ['scratch', 'prepare', 'flaky:completed:1', 'deploy:failed:2', 'recover', 'cleanup'],
    outputs: {
      succeeded_on: 1,
      flaky_attempts: 1,
      deploy_attempts: 2,
      outcome: expect.stringContaining('registry unreachable'),
      error_code: 'COMMAND_FAILED',
    },
  },
  {
    file: 'retry_and_recover.md',
    title: 'more failures than attempts: the run fails at the flaky step',
    inputs: { failures: 5 },
    status: 'failed',
    steps: ['scratch', 'prepare', 'flaky:failed:4'],
    outputs: null,
    error: { code: 'COMMAND_FAILED', step: 'flaky' },
    check: (r) => expect(r.error?.message).toContain('attempt 4: not yet'),
  },
  {
    file: 'wait_for_signal.md',
    title: 'approved, then the release window opens',
    inputs: { version: '2.1.0' },
    waitsFor: ['review'],
    signals: [
      { name: 'review', payload: { approved: true }, waitsFor: ['release_window'] },
      { name: 'release_window', payload: { by: 'ops' } },
    ],
    status: 'completed',
    steps: ['draft', 'review', 'window', 'publish'],
    outputs: { approved: true, message: 'Published v2.1.0 (window opened by ops).' },
  },
  {
    file: 'wait_for_signal.md',
    title: 'rejected: the <otherwise> edge, no release window',
    inputs: {},
    waitsFor: ['review'],
    signals: [{ name: 'review', payload: { approved: false, reason: 'typo in line 2' } }],
    status: 'completed',
    steps: ['draft', 'review', 'rejected'],
    outputs: { approved: false, message: 'v1.0.0 not published: typo in line 2' },
  },
  {
    file: 'saga_with_approval.md',
    title: 'approved: the order ships, nothing is undone',
    inputs: { order: 'A-7' },
    waitsFor: ['approve'],
    signals: [{ name: 'approve', payload: { approved: true, note: 'fine' } }],
    status: 'completed',
    steps: ['reserve', 'charge', 'approve', 'ship'],
    outputs: { message: 'Order A-7 shipped (fine).' },
  },
  {
    file: 'saga_with_approval.md',
    title: 'refused: the run fails, the charge is refunded, then the stock released',
    inputs: { order: 'A-8', amount: 12 },
    waitsFor: ['approve'],
    signals: [{ name: 'approve', payload: { approved: false, note: 'too expensive' } }],
    status: 'failed',
    steps: [
      'reserve',
      'charge',
      'approve',
      'refused:failed:1',
      'compensate:charge',
      'compensate:reserve:completed:1',
    ],
    error: { code: 'COMMAND_FAILED', step: 'refused' },
    check: (record) => {
      // The error quotes the command as written, and says why in the command's own words.
      expect(record.error!.message).toContain("echo 'order {input:order} refused: ${state.note}'");
      expect(record.error!.message).toContain('order A-8 refused: too expensive');
    },
  },
  {
    file: 'child_directive.md',
    title: 'two child runs, outputs combined',
    inputs: { first: 'Ada', second: 'Grace' },
    status: 'completed',
    steps: ['greet_first', 'greet_second'],
    outputs: { greetings: ['Hello, Ada.', 'Hello, Grace!'], total_length: 24 },
  },
  {
    file: 'greet_child.md',
    title: 'run on its own, a boolean input given as text',
    inputs: { name: 'Ada', excited: 'true' },
    status: 'completed',
    steps: ['compose'],
    outputs: { greeting: 'Hello, Ada!', length: 11 },
  },
  // Both render_and_expr rows fail while a <render> step settles with a stale context: its
  // <assign>s (and <next> conditions) see the state from before the previous step's assigns, so
  // `headline` comes out "Total: " (ActiveRun.runAction, case 'render', calls finish(), which
  // reads actor.getSnapshot() during the transition). Reported to the engine's owners.
  {
    file: 'render_and_expr.md',
    title: 'the default orders',
    inputs: {},
    status: 'completed',
    steps: ['totals', 'report'],
    outputs: {
      total: 100,
      items: 4,
      multiples: ['baton'],
      by_price: ['metronome', 'score', 'baton'],
      headline: 'Total: 100.00',
      invoice:
        '## Invoice for friend\n\n4 items, 100 EUR in total.\nBought more than once: ["baton"].',
    },
  },
  {
    file: 'render_and_expr.md',
    title: 'a customer, one order, and a currency from the environment',
    inputs: { customer: 'Ada', orders: [{ item: 'baton', qty: 2, price: 12.5 }] },
    status: 'completed',
    steps: ['totals', 'report'],
    outputs: {
      total: 25,
      items: 2,
      multiples: ['baton'],
      by_price: ['baton'],
      headline: 'Total: 25.00',
      invoice: '## Invoice for Ada\n\n2 items, 25 CHF in total.\nBought more than once: ["baton"].',
    },
  },
  {
    file: 'tidy_notes.md',
    title: 'glob, grep, a fetched page and an edit, together',
    inputs: {},
    site: {
      '/release.html': {
        type: 'text/html; charset=utf-8',
        body: '<html><head><title>Releases</title></head><body><h1>Dirigent 2.1.0</h1><p>Faster loops.</p></body></html>',
      },
    },
    status: 'completed',
    steps: ['scratch', 'find', 'search', 'fetch', 'edit', 'check', 'cleanup'],
    outputs: {
      notes: 2,
      todo_line: 3,
      version: '2.1.0',
      match: 'exact',
      release_notes: 'Release notes\n\nVersion 2.1.0\n',
    },
    check: (r) => {
      const edit = r.steps.find((s) => s.name === 'edit');
      expect(edit?.status).toBe('completed');
    },
  },
  {
    file: 'tidy_notes.md',
    title: 'a marker the note does not hold: the edit fails with NO_MATCH, naming old',
    inputs: { marker: 'FIXME: version' },
    site: { '/release.html': { type: 'text/html', body: '<h1>Dirigent 2.1.0</h1>' } },
    status: 'failed',
    steps: ['scratch', 'find', 'search', 'fetch', 'edit:failed:1'],
    outputs: null,
    error: { code: 'NO_MATCH', step: 'edit' },
  },
  {
    file: 'python_and_typescript_tools.md',
    title: 'a Python tool and a TypeScript tool',
    inputs: { title: 'Écrire des outils, vite!' },
    status: 'completed',
    steps: ['stats', 'slug', 'summary'],
    outputs: {
      slug: 'ecrire-des-outils-vite',
      words: 13,
      top: ['conductor', 'conductors', 'follows'],
      summary:
        '/ecrire-des-outils-vite: 13 words in 2 sentences, mostly about ["conductor","conductors","follows"].',
    },
  },
];

/** Environment the `{env:…}` templates see (the `render_and_expr` row for Ada sets a currency). */
function envOf(row: Row): Record<string, string> {
  return row.file === 'render_and_expr.md' && row.inputs.customer === 'Ada'
    ? { DIRIGENT_EXAMPLE_CURRENCY: 'CHF' }
    : {};
}

/** The repository's policy, which allows the one variable an example reads. */
const REPOSITORY_POLICY = loadProjectPolicy(resolve(DIRECTIVES, '..'), {});

/** The repository's own `.ai`: the example tools the examples call. */
const EXAMPLE_SPACE = resolve(DIRECTIVES, '..', '.ai');
let savedUserSpace: string | undefined;
beforeAll(() => {
  // Each example runs in a scratch project; its tools come from the user space, pointed at the
  // repository's .ai (which holds tools only, so child directives resolve as before).
  savedUserSpace = process.env.DIRIGENT_USER_SPACE;
  process.env.DIRIGENT_USER_SPACE = EXAMPLE_SPACE;
});
afterAll(() => {
  if (savedUserSpace === undefined) delete process.env.DIRIGENT_USER_SPACE;
  else process.env.DIRIGENT_USER_SPACE = savedUserSpace;
});

/** An engine over a scratch project, with the built-in tools and the example tools. */
function exampleEngine(project: string, env: Record<string, string>): Engine {
  // The scratch project follows the repository's own policy (.ai/config/dirigent.yaml).
  const loader = new DirectiveLoader(project, false, REPOSITORY_POLICY);
  return new Engine({
    projectDir: project,
    dispatcher: new ItemDispatcher(loader.items),
    loader,
    store: new MemoryRunStore(),
    env,
  });
}

describe('directives/ examples', () => {
  it('has a row for every file in directives/, and a file for every row', () => {
    const covered = [...new Set(ROWS.map((r) => r.file))].sort();
    expect(covered).toEqual(FILES);
  });

  describe.each(FILES)('%s', (file) => {
    const rows = ROWS.filter((r) => r.file === file);

    it('is documented: a Markdown title and a preamble before the directive', () => {
      const text = readFileSync(join(DIRECTIVES, file), 'utf8');
      const preamble = text.slice(0, text.indexOf('```xml'));
      expect(preamble).toMatch(/^# \S/);
      expect(preamble.split('\n').slice(1).join('\n').trim().length).toBeGreaterThan(40);
    });

    it('compiles without warnings; its name is the file stem', () => {
      const loaded = new DirectiveLoader(DIRECTIVES, false, REPOSITORY_POLICY).fromText(
        join(DIRECTIVES, file),
        readFileSync(join(DIRECTIVES, file), 'utf8'),
      );
      expect(loaded.compiled.directive.name).toBe(basename(file, '.md'));
      expect(loaded.compiled.directive.warnings).toEqual([]);
    });

    if (rows.length === 0) {
      it('has a row in the table of test/examples.test.ts', () => {
        expect.fail(
          `directives/${file} has no row in ROWS: add one with its inputs and expected record.`,
        );
      });
      return;
    }

    it.each(rows.map((r) => [r.title, r] as const))('runs: %s', async (_title, row) => {
      const project = await mkdtemp(join(tmpdir(), 'dirigent-example-'));
      let site: ExampleServer | undefined;
      const env = envOf(row);
      if (row.site !== undefined) {
        site = await serveExamplePages(row.site);
        await mkdir(join(project, '.ai', 'config'), { recursive: true });
        await writeFile(
          join(project, SITE_POLICY),
          'hosts: ["127.0.0.1"]\nprivate: ["127.0.0.1"]\n',
        );
        env.DIRIGENT_EXAMPLE_SITE = `http://${site.host}`;
      }
      const engine = exampleEngine(project, env);
      try {
        const loaded = await engine.loader.loadFile(join(DIRECTIVES, row.file));
        let record = await engine.run(loaded, row.inputs);
        if (row.waitsFor) {
          expect(record.status).toBe('waiting');
          expect(record.waiting?.map((w) => w.signal)).toEqual(row.waitsFor);
        }
        for (const s of row.signals ?? []) {
          record = await engine.signal(record.runId, s.name, s.payload);
          if (s.waitsFor) {
            expect(record.status).toBe('waiting');
            expect(record.waiting?.map((w) => w.signal)).toEqual(s.waitsFor);
          }
        }
        expect(record.status).toBe(row.status);
        expect(record.directive).toBe(basename(row.file, '.md'));
        expectSteps(record.steps, row.steps);
        if (row.outputs !== undefined) expect(record.outputs).toEqual(row.outputs);
        if (row.error) expect(record.error).toMatchObject(row.error);
        else expect(record.error).toBeNull();
        expect(record.waiting ?? []).toEqual([]);
        // A bound that catches a run stuck on something (a lock, a retry delay never cut short),
        // not a speed goal: the examples run beside the rest of the suite. Speed: npm run bench.
        expect(record.endedAt! - record.startedAt).toBeLessThan(10_000);
        row.check?.(record);
        // Nothing is left outside .dirigent/ (the examples' scratch space) but the row's policy.
        const left = (await filesUnder(project)).filter((f) => !f.startsWith('.dirigent/'));
        expect(left).toEqual(row.site === undefined ? [] : [SITE_POLICY.split('\\').join('/')]);
      } finally {
        await site?.close();
        engine.release();
        await engine.dispatcher.close?.();
        await rm(project, { recursive: true, force: true });
      }
    });
  });

  it('wait_for_signal lists the instruction with its text filled in while it waits', async () => {
    const project = await mkdtemp(join(tmpdir(), 'dirigent-example-'));
    const engine = exampleEngine(project, {});
    try {
      const record = await engine.run(
        await engine.loader.loadFile(join(DIRECTIVES, 'wait_for_signal.md')),
        { version: '3.0.0' },
      );
      expect(record.status).toBe('waiting');
      expect(record.steps).toMatchObject([{ name: 'draft', status: 'completed' }]);
      const [w] = record.waiting ?? [];
      expect(w).toMatchObject({ step: 'review', signal: 'review' });
      expect(w?.text).toContain('Release notes for v3.0.0: faster loops, friendlier errors.');
      expect(w?.text).toContain('{"approved": true}');
      await expect(engine.signal(record.runId, 'release_window', {})).rejects.toMatchObject({
        code: 'UNKNOWN_SIGNAL',
      });
      const cancelled = await engine.cancelRun(record.runId);
      expect(cancelled.status).toBe('cancelled');
    } finally {
      engine.release();
      await engine.dispatcher.close?.();
      await rm(project, { recursive: true, force: true });
    }
  });
});

/** Compares step entries with the specs, allowing any order inside a group. */
function expectSteps(actual: StepEntry[], specs: StepSpec[]): void {
  const got = actual.map((s) => `${s.name}:${s.status}:${s.attempts}`);
  const want: string[] = [];
  const sorted: string[] = [];
  let at = 0;
  for (const spec of specs) {
    const group = typeof spec === 'string' ? [spec] : spec;
    const slice = got.slice(at, at + group.length);
    const expected = group.map((g) => normalize(g, slice));
    // Within a group, order by the actual entries so that the comparison shows real differences.
    if (typeof spec !== 'string') {
      expected.sort();
      slice.sort();
    }
    want.push(...expected);
    sorted.push(...slice);
    at += group.length;
  }
  sorted.push(...got.slice(at));
  expect(sorted).toEqual(want);
}

/**
 * `name` → `name:completed:<actual attempts>`, `name:status` → `name:status:<actual attempts>`.
 * A compensation's name holds a colon of its own (`compensate:charge`).
 */
function normalize(spec: string, candidates: string[]): string {
  const [, name, status = 'completed', attempts] =
    /^((?:compensate:)?[^:]+)(?::([^:]+))?(?::(\d+))?$/.exec(spec)!;
  if (attempts !== undefined) return `${name}:${status}:${attempts}`;
  const actual = candidates.find((c) => c.startsWith(`${name}:${status}:`));
  return actual ?? `${name}:${status}:1`;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split('\\').join('/'));
}

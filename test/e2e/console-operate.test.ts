/**
 * Operating runs from the web console, in headless Chromium against a real `dirigent serve` and a
 * real worker on Redis (one key prefix for the file, deleted after): a failed run redriven from
 * its page and followed to its end, a rerun from a step (inputs edited) landing on the new run
 * with its link to the old one, runs selected in the list and cancelled, and a bulk action on the
 * list's filter after its dry run. Every wait is for a condition, with a deadline.
 */
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RedisClient } from '../../src/redis/redis-client.js';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, pingRedis, redisDownMessage } from '../../src/redis/redis-connection.js';
import { apiClient, TOKEN } from '../support/api-server.js';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { consoleProject } from '../support/console-project.js';
import { NARROW } from '../support/console-screenshots.js';
import { serveConsole, type ServedConsole } from '../support/console-servers.js';
import { CLI_MAIN } from '../support/paths.js';
import { deleteKeys, TEST_REDIS_URL } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

let browser: TestBrowser;
let redis: RedisClient;
let project: string;
let served: ServedConsole;
let url: string;
let client: ReturnType<typeof apiClient>;
const prefix = `dirigent-test:${randomUUID()}`;

beforeAll(async () => {
  if (!(await pingRedis(TEST_REDIS_URL, 2000)))
    throw new Error(`${redisDownMessage(TEST_REDIS_URL)} The console tests need it.`);
  redis = connectRedis(TEST_REDIS_URL);
  project = consoleProject();
  const env = {
    ...process.env,
    REDIS_URL: TEST_REDIS_URL,
    DIRIGENT_PREFIX: prefix,
    DIRIGENT_API_TOKENS: TOKEN,
  };
  [served, browser] = await Promise.all([serveConsole(CLI_MAIN, project, env), launchBrowser()]);
  url = served.url;
  client = apiClient(url);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  served?.stop();
  if (redis) {
    await deleteKeys(redis, `${prefix}:*`);
    await redis.quit();
  }
  if (project) rmSync(project, { recursive: true, force: true });
});

afterEach(() => {
  expect(browser.takeErrors(), 'JavaScript errors in the pages').toEqual([]);
});

/** Starts a run through the API and waits up to `wait` s for it to end or wait. */
async function start(
  directive: string,
  inputs: Record<string, unknown> = {},
  options: { wait?: number; tags?: Record<string, string> } = {},
) {
  const res = await client.post(`/v1/runs?wait=${options.wait ?? 20}`, {
    directive,
    inputs,
    ...(options.tags && { tags: options.tags }),
  });
  expect([200, 201, 202], JSON.stringify(res.body)).toContain(res.status);
  return res.body as { runId: string; status: string };
}

/** A path in the project for `flaky`'s `mend` input: the run fails until it exists. */
const mendFile = () => join(project, `mended-${randomUUID()}`);

const status = (page: Page) => page.locator('article.run').getAttribute('data-status');

const record = async (runId: string) =>
  (await client.get(`/v1/runs/${runId}`)).body as {
    status: string;
    redrives?: { by: string; steps: string[]; status: string }[];
    rerunOf?: { runId: string; step: string };
    outputs: Record<string, unknown> | null;
  };

describe('operating runs in the console', { timeout: 60_000 }, () => {
  it('redrives a failed run from its page, follows it to completion and shows the redrive', async () => {
    const mend = mendFile();
    const { runId, status: ended } = await start('flaky', { mend });
    expect(ended).toBe('failed');
    const page = await browser.open(`${url}/runs/${runId}`, { token: TOKEN });
    await expect.poll(() => status(page)).toBe('failed');
    // A failed run can be redriven and rerun; it is not under way, so it cannot be cancelled.
    await page.getByRole('button', { name: 'Rerun from step…' }).waitFor();
    expect(await page.getByRole('button', { name: 'Cancel run…' }).count()).toBe(0);

    writeFileSync(mend, 'ok');
    await page.getByRole('button', { name: 'Redrive…' }).click();
    const confirm = page.getByRole('group', { name: 'Redrive the run?' });
    expect(await confirm.textContent()).toContain('mend');
    await confirm.getByRole('button', { name: 'Redrive', exact: true }).click();
    // The page follows the run's feed again: it sees it go on and complete.
    await expect.poll(() => status(page), { timeout: 20_000 }).toBe('completed');
    expect(
      await page.locator('[data-testid="graph"] [data-step="mend"]').getAttribute('data-state'),
    ).toBe('completed');
    const history = page.getByTestId('redrives');
    await expect.poll(() => history.locator('tbody tr').count()).toBe(1);
    const row = await history.locator('tbody tr').first().textContent();
    expect(row).toContain('console');
    expect(row).toContain('mend');
    expect(row).toContain('failed');
    expect(row).toContain('COMMAND_FAILED');
    // The buttons of a failed run are gone with the failure.
    expect(await page.getByRole('button', { name: 'Redrive…' }).count()).toBe(0);
    expect(await record(runId)).toMatchObject({
      status: 'completed',
      redrives: [{ by: 'console', steps: ['mend'], status: 'failed' }],
    });
    await page.close();
  });

  it('reruns a run from a step with edited inputs, lands on the new run, and links the two', async () => {
    const { runId: oldId } = await start('flaky', { mend: mendFile() });
    const mended = mendFile();
    writeFileSync(mended, 'ok');
    const page = await browser.open(`${url}/runs/${oldId}`, { token: TOKEN });
    await expect.poll(() => status(page)).toBe('failed');
    await page.getByRole('button', { name: 'Rerun from step…' }).click();
    const form = page.getByRole('form', { name: 'Rerun from a step' });
    const step = form.getByLabel('Step to start at');
    // Top-level steps that ran, the failed one chosen.
    expect(await step.locator('option').allTextContents()).toEqual(['prepare', 'mend']);
    expect(await step.inputValue()).toBe('mend');
    const inputs = form.getByLabel(/^Inputs/);
    expect(JSON.parse(await inputs.inputValue())).toMatchObject({ tries: 1 });

    // Not JSON: refused in the page, nothing sent.
    await inputs.fill('{ "mend": ');
    await form.getByRole('button', { name: 'Start rerun' }).click();
    await form.getByText(/The inputs are not JSON/).waitFor();
    // Refused by the server: its code, message and hint, as it said them.
    await inputs.fill(JSON.stringify({ mend: mended, tries: 'many' }));
    await form.getByRole('button', { name: 'Start rerun' }).click();
    const problem = form.locator('.problem');
    await problem.waitFor();
    expect(await problem.getAttribute('data-code')).toBe('INVALID_INPUTS');
    expect(await problem.textContent()).toContain('tries');
    expect(new URL(page.url()).pathname).toBe(`/runs/${oldId}`);

    await inputs.fill(JSON.stringify({ mend: mended }));
    await form.getByRole('button', { name: 'Start rerun' }).click();
    await page.waitForURL((u) => u.pathname.startsWith('/runs/') && !u.pathname.endsWith(oldId), {
      timeout: 15_000,
    });
    const newId = new URL(page.url()).pathname.split('/')[2]!;
    await expect.poll(() => status(page), { timeout: 20_000 }).toBe('completed');
    const link = page.getByTestId('rerun-of');
    expect(await link.textContent()).toContain('from mend');
    expect(await link.getByRole('link').getAttribute('href')).toBe(`/runs/${oldId}`);
    expect(await record(newId)).toMatchObject({
      status: 'completed',
      rerunOf: { runId: oldId, step: 'mend' },
      outputs: { said: { stdout: 'mended\n' } },
    });

    // Back on the old run: its rerun is listed.
    await link.getByRole('link').click();
    await page.waitForURL(`**/runs/${oldId}`);
    const reruns = page.getByTestId('reruns');
    await reruns.waitFor();
    expect(await reruns.getByRole('link').getAttribute('href')).toBe(`/runs/${newId}`);
    await page.close();
  });

  it('filters the list by tag, selects runs and cancels them one by one, counting those skipped', async () => {
    const batch = randomUUID().slice(0, 8);
    const tags = { batch };
    const done = await start('greet', { who: 'Ada' }, { tags });
    const a = await start('linger', {}, { wait: 0, tags });
    const b = await start('linger', {}, { wait: 0, tags });
    await start('greet', { who: 'not in the batch' });
    for (const r of [a, b])
      await waitFor(async () => (await record(r.runId)).status === 'running', {
        timeoutMs: 15_000,
        what: `run ${r.runId} to run`,
      });

    const page = await browser.open(`${url}/?tag=batch:${batch}`, { token: TOKEN });
    const rows = page.locator('[data-run]');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(3);
    const active = page.getByRole('group', { name: 'Tags filtered by' });
    expect(await active.textContent()).toContain(`batch:${batch}`);

    await page.getByRole('checkbox', { name: 'Select the 3 runs listed' }).check();
    const selection = page.getByRole('region', { name: 'Selected runs' });
    expect(await selection.getByTestId('selected-count').textContent()).toBe('3 runs selected');
    await selection.getByRole('button', { name: 'Cancel selected' }).click();
    await selection
      .getByRole('group', { name: 'Cancel 3 runs?' })
      .getByRole('button', { name: 'Cancel 3 runs' })
      .click();
    const outcome = selection.getByTestId('selection-outcome');
    await outcome.waitFor({ timeout: 20_000 });
    expect(await outcome.getByTestId('acted').textContent()).toBe('2');
    expect(await outcome.getByTestId('skipped').textContent()).toBe('1');
    expect(await outcome.getByTestId('failed').textContent()).toBe('0');
    expect(await outcome.textContent()).toContain('RUN_ENDED');
    for (const r of [a, b]) {
      expect((await record(r.runId)).status).toBe('cancelled');
      await expect
        .poll(() => page.locator(`[data-run="${r.runId}"] .badge`).textContent(), {
          timeout: 10_000,
        })
        .toBe('cancelled');
    }
    expect((await record(done.runId)).status).toBe('completed');
    // The selection was emptied by the action.
    expect(await page.getByRole('checkbox', { checked: true }).count()).toBe(0);
    await page.close();
  });

  it('pauses a directive from its page, shows its run paused, and resumes it from the run', async () => {
    try {
      const directive = await browser.open(`${url}/directives/greet`, { token: TOKEN });
      await directive.getByRole('button', { name: 'Pause directive' }).click();
      await directive.getByRole('button', { name: 'Resume directive' }).waitFor();
      expect(await directive.locator('.page-head .badge.st-paused').textContent()).toBe('paused');
      expect((await client.get('/v1/pauses')).body).toEqual({ all: false, directives: ['greet'] });
      await directive.close();

      const { runId } = await start('greet', { who: 'Held' }, { wait: 0 });
      await waitFor(async () => (await record(runId)).status === 'paused', {
        timeoutMs: 15_000,
        what: 'the run of the paused directive to be paused',
      });
      // Counted, and listed, like a waiting run.
      const list = await browser.open(url, { token: TOKEN });
      const count = list.locator('.count.st-paused');
      await expect.poll(() => count.locator('strong').textContent(), { timeout: 10_000 }).toBe('1');
      expect(await list.locator(`[data-run="${runId}"] .badge`).textContent()).toBe('paused');
      expect(await list.getByRole('group', { name: 'Pauses' }).textContent()).toContain('greet');
      await list.close();

      const run = await browser.open(`${url}/runs/${runId}`, { token: TOKEN });
      await expect.poll(() => status(run)).toBe('paused');
      await run.getByRole('button', { name: 'Resume greet' }).click();
      await expect.poll(() => status(run), { timeout: 15_000 }).toBe('completed');
      expect((await client.get('/v1/pauses')).body).toEqual({ all: false, directives: [] });
      await run.close();

      // Everything, from the run list.
      const runs = await browser.open(url, { token: TOKEN });
      await runs.getByRole('button', { name: 'Pause everything…' }).click();
      await runs.getByRole('button', { name: 'Pause everything', exact: true }).click();
      await runs.getByText('Everything is paused').waitFor();
      expect((await client.get('/v1/pauses')).body).toMatchObject({ all: true });
      await runs.getByRole('button', { name: 'Resume everything' }).click();
      await runs.getByRole('button', { name: 'Pause everything…' }).waitFor();
      expect((await client.get('/v1/pauses')).body).toMatchObject({ all: false });
      await runs.close();
    } finally {
      await client.post('/v1/resume', { all: true });
    }
  });

  it('keeps the list with its selection boxes within a narrow screen', async () => {
    await start('greet', { who: 'Ada' });
    const page = await browser.open(url, { token: TOKEN, ...NARROW });
    const row = page.locator('[data-run]').first();
    await row.getByRole('checkbox').check();
    await page.getByRole('region', { name: 'Selected runs' }).waitFor();
    const overflow = await page.evaluate(() => {
      // In the page: its document is wider than the screen when something overflows.
      const g = globalThis as unknown as {
        document: { documentElement: { scrollWidth: number } };
        innerWidth: number;
      };
      return g.document.documentElement.scrollWidth - g.innerWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    await page.close();
  });

  it('adds and removes a tag filter in the page, kept in the address', async () => {
    const batch = randomUUID().slice(0, 8);
    const { runId } = await start('greet', { who: 'Tagged' }, { tags: { batch } });
    const page = await browser.open(url, { token: TOKEN });
    await page.locator('[data-run]').first().waitFor();
    const tag = page.getByRole('form', { name: 'Filter by tag' });
    await tag.getByLabel('Tag').fill('no-colon');
    await tag.getByRole('button', { name: 'Add' }).click();
    await tag.getByText('Write a tag as name:value.').waitFor();
    await tag.getByLabel('Tag').fill(`batch:${batch}`);
    await tag.getByRole('button', { name: 'Add' }).click();
    await page.waitForURL((u) => u.searchParams.get('tag') === `batch:${batch}`);
    await expect.poll(() => page.locator('[data-run]').count()).toBe(1);
    expect(await page.locator('[data-run]').getAttribute('data-run')).toBe(runId);
    await page.getByRole('button', { name: `Remove tag batch:${batch}` }).click();
    await page.waitForURL((u) => !u.searchParams.has('tag'));
    await expect.poll(() => page.locator('[data-run]').count()).toBeGreaterThan(1);
    await page.close();
  });

  it('redrives every failed run of a filter in bulk, after a dry run that counts them', async () => {
    const batch = randomUUID().slice(0, 8);
    const tags = { batch };
    const mend = mendFile();
    const failed = [
      (await start('flaky', { mend }, { tags })).runId,
      (await start('flaky', { mend }, { tags })).runId,
    ];
    await start('greet', { who: 'Ada' }, { tags });
    const page = await browser.open(`${url}/?status=failed&tag=batch:${batch}`, { token: TOKEN });
    await expect.poll(() => page.locator('[data-run]').count(), { timeout: 10_000 }).toBe(2);
    await page.getByRole('button', { name: 'Bulk…' }).click();
    const panel = page.getByRole('region', { name: 'Act on every run the filter matches' });
    expect(await panel.getByTestId('bulk-filter').textContent()).toContain(
      `status failed · tag batch:${batch}`,
    );
    expect(await panel.getByLabel('Action').inputValue()).toBe('redrive');
    await panel.getByRole('button', { name: 'Dry run' }).click();
    const dry = panel.getByTestId('bulk-dry-run');
    await dry.waitFor();
    expect(await dry.getByTestId('bulk-matched').textContent()).toBe('2 runs');
    expect(
      (
        await dry
          .locator('[data-sample]')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-sample')))
      ).sort(),
    ).toEqual([...failed].sort());
    // Nothing changed.
    for (const runId of failed) expect((await record(runId)).status).toBe('failed');

    writeFileSync(mend, 'ok');
    await panel.getByRole('button', { name: 'Redrive: 2 runs' }).click();
    const report = panel.getByTestId('bulk-report');
    await report.waitFor({ timeout: 20_000 });
    expect(await report.getByTestId('bulk-acted').textContent()).toBe('2');
    expect(await report.getByTestId('bulk-skipped').textContent()).toBe('0');
    expect(await report.getByTestId('bulk-failed').textContent()).toBe('0');
    for (const runId of failed)
      await waitFor(async () => (await record(runId)).status === 'completed', {
        timeoutMs: 20_000,
        what: `run ${runId} to complete once redriven`,
      });
    // Redriven, they no longer match the list's status filter: the live list lets them go.
    await expect.poll(() => page.locator('[data-run]').count(), { timeout: 10_000 }).toBe(0);
    await page.close();
  });
});

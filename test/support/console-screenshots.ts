/**
 * The console's screenshots (`docs/console/`): the run list, a run of every shape of graph with a
 * step's details open, that run on a phone's screen, a failed run with its redrive and rerun
 * controls open, and the run list with runs selected and a bulk action's dry run. {@link takeScreenshots} takes them in a
 * browser against a console that serves; {@link screenshotConsole} does the whole of it for
 * `npm run screenshots` (scripts/screenshots.mjs): a console project with a worker and a server
 * on Redis under a key prefix of its own, a few runs, the screenshots, and everything removed
 * after. The console test takes them too, into a temporary folder, so that this keeps working.
 *
 * Nothing here imports vitest: the screenshot script runs it outside the tests.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { connectRedis, pingRedis, redisDownMessage } from '../../src/redis/redis-connection.js';
import { launchBrowser, type TestBrowser } from './browser.js';
import { consoleProject } from './console-project.js';
import { spawnServer } from './console-servers.js';
import { deleteKeys } from './redis-keys.js';

/** The screenshots, by file name: what each shows. */
export const SCREENSHOTS = {
  'runs.png': 'the run list',
  'run.png': 'a run with parallel branches, a foreach and a loop, one step opened',
  'run-narrow.png': 'the same run on a 375 px wide screen',
  'redrive.png': 'a failed run, redriven once, with its Redrive and Rerun from step controls open',
  'bulk.png': 'the failed runs listed, two selected, and a bulk redrive counted by its dry run',
} as const;

/** A file name of {@link SCREENSHOTS}. */
export type ScreenshotName = keyof typeof SCREENSHOTS;

/** The width and height of the screenshot's page, for the narrow one. */
export const NARROW = { width: 375, height: 740 } as const;

/** Resolves once the run page shows the run as completed (the graph is drawn by then). */
async function completed(page: Page, timeoutMs = 15_000): Promise<void> {
  await page.locator('article.run[data-status="completed"]').waitFor({ timeout: timeoutMs });
}

/** The runs the screenshots show, of the console project's directives. */
export interface ScreenshotRuns {
  /** A completed run of `showcase`. */
  showcase: string;
  /** A failed run of `flaky` (redriven once, ideally, so that its history shows). */
  failed: string;
}

/**
 * Takes the {@link SCREENSHOTS} into `outDir` (made if missing), with `browser` signed in with
 * `token`, on the console at `url`, of `runs`; the list shows at least two failed runs. Resolves
 * with the files written.
 */
export async function takeScreenshots(
  browser: TestBrowser,
  url: string,
  token: string,
  runs: ScreenshotRuns,
  outDir: string,
): Promise<string[]> {
  const showcaseRunId = runs.showcase;
  mkdirSync(outDir, { recursive: true });
  const file = (name: ScreenshotName) => join(outDir, name);

  const run = await browser.open(`${url}/runs/${showcaseRunId}`, { token });
  await completed(run);
  await run.locator('[data-step="each_item"]').focus();
  await run.keyboard.press('Enter');
  await run.getByRole('heading', { name: /Step each_item/ }).waitFor();
  await run.screenshot({ path: file('run.png'), fullPage: true });
  await run.close();

  const list = await browser.open(url, { token });
  await list.locator('[data-run]').first().waitFor();
  await list.screenshot({ path: file('runs.png') });
  await list.close();

  const narrow = await browser.open(`${url}/runs/${showcaseRunId}`, { token, ...NARROW });
  await completed(narrow);
  await narrow.screenshot({ path: file('run-narrow.png') });
  await narrow.close();

  const failed = await browser.open(`${url}/runs/${runs.failed}`, { token });
  await failed.locator('article.run[data-status="failed"]').waitFor({ timeout: 15_000 });
  await failed.getByRole('button', { name: 'Redrive…' }).click();
  await failed.getByRole('button', { name: 'Rerun from step…' }).click();
  await failed.getByLabel('Step to start at').waitFor();
  await failed.locator('[data-testid="graph"] [data-step="mend"]').waitFor();
  await failed.screenshot({ path: file('redrive.png') });
  await failed.close();

  const selection = await browser.open(`${url}/?status=failed`, { token });
  const rows = selection.locator('[data-run]');
  await rows.nth(1).waitFor();
  for (const i of [0, 1]) await rows.nth(i).getByRole('checkbox').check();
  await selection.getByRole('button', { name: 'Bulk…' }).click();
  await selection.getByRole('button', { name: 'Dry run' }).click();
  await selection.getByTestId('bulk-dry-run').waitFor();
  await selection.screenshot({ path: file('bulk.png') });
  await selection.close();

  return (Object.keys(SCREENSHOTS) as ScreenshotName[]).map(file);
}

/** What {@link screenshotConsole} needs. */
export interface ScreenshotConsoleOptions {
  /** The built CLI (`dist/cli/main.js`). */
  cli: string;
  /** Where the screenshots go. */
  outDir: string;
  /** The Redis the worker and the server use. */
  redisUrl: string;
}

const TOKEN = 'screenshots-token-0123456789abcdef';

/**
 * Serves the console project (a worker and `dirigent serve` on `redisUrl`, keys under a prefix of
 * their own), makes a few runs (completed, failed, one waiting for an answer, a failed one
 * redriven once and rerun from its failed step, the showcase) and takes the {@link SCREENSHOTS}
 * into `outDir`; then stops everything and deletes the keys and the project. Resolves with the
 * files written.
 */
export async function screenshotConsole(options: ScreenshotConsoleOptions): Promise<string[]> {
  const { cli, outDir, redisUrl } = options;
  if (!(await pingRedis(redisUrl, 2000)))
    throw new Error(`${redisDownMessage(redisUrl)} The screenshots need it.`);
  const prefix = `dirigent-screenshots:${randomUUID()}`;
  const project = consoleProject();
  const env = {
    ...process.env,
    REDIS_URL: redisUrl,
    DIRIGENT_PREFIX: prefix,
    DIRIGENT_API_TOKENS: TOKEN,
  };
  const stops: (() => Promise<void> | void)[] = [];
  try {
    const started = await Promise.allSettled([
      spawnServer(env, [cli, 'worker', '--project', project], /jobs from/),
      spawnServer(
        { ...env, DIRIGENT_LOG_LEVEL: 'warn' },
        [cli, 'serve', '--port', '0', '--project', project, '--rate-limit', '0'],
        /listening on (http:\/\/\S+)/,
      ),
    ]);
    for (const s of started)
      if (s.status === 'fulfilled') stops.push(() => void s.value.child.kill('SIGKILL'));
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    const served = (started[1] as PromiseFulfilledResult<Awaited<ReturnType<typeof spawnServer>>>)
      .value;
    const browser = await launchBrowser();
    stops.push(() => browser.close());
    const url = served.match[1]!;
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = (await res.json()) as { runId?: string };
      if (!res.ok || answer.runId === undefined)
        throw new Error(`POST ${path} failed (${res.status}): ${JSON.stringify(answer)}`);
      return answer.runId;
    };
    const start = (directive: string, inputs: Record<string, unknown> = {}) =>
      post('/v1/runs?wait=20', { directive, inputs });
    await start('greet', { who: 'Ada' });
    await start('fails');
    await start('ask', { version: '2.4' });
    await start('greet', { who: 'Grace', times: 3 });
    const failed = await start('flaky', { mend: join(project, 'mended') });
    await post(`/v1/runs/${failed}/redrive?wait=20`, { by: 'ops:ada' });
    writeFileSync(join(project, 'fixed'), 'ok');
    await post(`/v1/runs/${failed}/rerun?wait=20`, { inputs: { mend: join(project, 'fixed') } });
    const showcase = await start('showcase');
    return await takeScreenshots(browser, url, TOKEN, { showcase, failed }, outDir);
  } finally {
    for (const stop of stops.reverse()) await stop();
    const redis = connectRedis(redisUrl);
    await deleteKeys(redis, `${prefix}:*`);
    await redis.quit();
    rmSync(project, { recursive: true, force: true });
  }
}

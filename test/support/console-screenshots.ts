/**
 * The console's screenshots (`docs/console/`): the run list, a run of every shape of graph with a
 * step's details open, and that run on a phone's screen. {@link takeScreenshots} takes them in a
 * browser against a console that serves; {@link screenshotConsole} does the whole of it for
 * `npm run screenshots` (scripts/screenshots.mjs): a console project with a worker and a server
 * on Redis under a key prefix of its own, a few runs, the screenshots, and everything removed
 * after. The console test takes them too, into a temporary folder, so that this keeps working.
 *
 * Nothing here imports vitest: the screenshot script runs it outside the tests.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
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
} as const;

/** A file name of {@link SCREENSHOTS}. */
export type ScreenshotName = keyof typeof SCREENSHOTS;

/** The width and height of the screenshot's page, for the narrow one. */
export const NARROW = { width: 375, height: 740 } as const;

/** Resolves once the run page shows the run as completed (the graph is drawn by then). */
async function completed(page: Page, timeoutMs = 15_000): Promise<void> {
  await page.locator('article.run[data-status="completed"]').waitFor({ timeout: timeoutMs });
}

/**
 * Takes the {@link SCREENSHOTS} into `outDir` (made if missing), with `browser` signed in with
 * `token`, on the console at `url`; `showcaseRunId` is a completed run of the console project's
 * `showcase` directive. Resolves with the files written.
 */
export async function takeScreenshots(
  browser: TestBrowser,
  url: string,
  token: string,
  showcaseRunId: string,
  outDir: string,
): Promise<string[]> {
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
 * their own), makes a few runs (one completed, one failed, one waiting for an answer, the showcase)
 * and takes the {@link SCREENSHOTS} into `outDir`; then stops everything and deletes the keys and
 * the project. Resolves with the files written.
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
    const start = async (directive: string, inputs: Record<string, unknown> = {}) => {
      const res = await fetch(`${url}/v1/runs?wait=20`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ directive, inputs }),
      });
      const body = (await res.json()) as { runId?: string };
      if (!res.ok || body.runId === undefined)
        throw new Error(`Starting ${directive} failed (${res.status}): ${JSON.stringify(body)}`);
      return body.runId;
    };
    await start('greet', { who: 'Ada' });
    await start('fails');
    await start('ask', { version: '2.4' });
    await start('greet', { who: 'Grace', times: 3 });
    const showcase = await start('showcase');
    return await takeScreenshots(browser, url, TOKEN, showcase, outDir);
  } finally {
    for (const stop of stops.reverse()) await stop();
    const redis = connectRedis(redisUrl);
    await deleteKeys(redis, `${prefix}:*`);
    await redis.quit();
    rmSync(project, { recursive: true, force: true });
  }
}

/**
 * Headless Chromium for the console's end-to-end tests (Debian's `chromium`, driven by
 * playwright-core): one browser per test file with a fresh profile, pages that fail their test
 * when they log a JavaScript error, and pages signed in with an API token for their session. The
 * browser is made sure of before it is launched (installed when missing, as the console's vitest
 * project does first), so a console test file in any project of the suite gets it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, ensureChromium } from '../../scripts/ensure-chromium.mjs';

/**
 * Where Debian installs Chromium; scripts/ensure-chromium.mjs installs it when missing (the
 * console's vitest project runs it before its tests).
 */
export { CHROMIUM };

/** The switches the tests run Chromium with: no sandbox (root), no GPU, nothing fetched. */
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A browser with a fresh profile, and what its pages logged. */
export interface TestBrowser {
  context: BrowserContext;
  /**
   * A new page at `url` that collects its JavaScript errors; with `token`, signed in for its
   * session first (as the sign-in form would leave it).
   */
  open(url: string, options?: { token?: string; width?: number; height?: number }): Promise<Page>;
  /** The JavaScript errors logged by pages since the last call, and forgets them. */
  takeErrors(): string[];
  close(): Promise<void>;
}

/** Starts Chromium headless with a fresh profile (see the module comment). */
export async function launchBrowser(): Promise<TestBrowser> {
  ensureChromium();
  const profile = mkdtempSync(join(tmpdir(), 'dirigent-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 860 },
  });
  let errors: string[] = [];
  return {
    context,
    async open(url, options = {}) {
      const page = await context.newPage();
      await page.setViewportSize({ width: options.width ?? 1280, height: options.height ?? 860 });
      page.on('pageerror', (err) => errors.push(`${page.url()}: ${err.message}`));
      page.on('console', (msg) => {
        // A refused request (the sign-in's 401) is the server's answer, not a script's error.
        if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource'))
          errors.push(`${page.url()}: console.error ${msg.text()}`);
      });
      if (options.token !== undefined)
        await page.addInitScript(
          (t) =>
            // In the page: what the sign-in form keeps.
            (
              globalThis as unknown as { sessionStorage: { setItem(k: string, v: string): void } }
            ).sessionStorage.setItem('dirigent.token', t),
          options.token,
        );
      await page.goto(url);
      return page;
    },
    takeErrors() {
      const out = errors;
      errors = [];
      return out;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

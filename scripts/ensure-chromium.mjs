// Debian's Chromium at /usr/bin/chromium, which the console's browser tests drive (playwright-core)
// and `npm run screenshots` uses: present, installed when missing, or a failure saying what to run.
//
// One place for this: `.ci/run` runs it as a command (`node scripts/ensure-chromium.mjs`), the
// console's vitest project names it as its globalSetup (so `npm test` and
// `npx vitest run test/e2e/console.test.ts` get the browser on a fresh machine too), and
// scripts/screenshots.mjs calls it. A missing browser never skips a test: it is installed, or the
// run stops at once with the command to run.
//
// Installing takes apt's lock through `flock`, so test runs that start together install once.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM = '/usr/bin/chromium';

/** What installs it, as root on Debian (what `.ci/run` has always run). */
export const INSTALL =
  'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium';

/** Whether `file` exists and may be run. */
function runnable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves once Chromium is at {@link CHROMIUM}: at once when it is there; installed with apt when
 * this process runs as root on a system with apt-get; otherwise throws an error whose message says
 * exactly what to run. `log` receives one line when an install starts and one when it ends.
 */
export function ensureChromium({ log = (line) => console.error(line) } = {}) {
  if (runnable(CHROMIUM)) return CHROMIUM;
  const why = 'The console tests drive Chromium at /usr/bin/chromium, which is missing';
  if (!existsSync('/usr/bin/apt-get'))
    throw new Error(
      `${why}, and this system has no apt-get to install Debian's chromium package. Install Chromium so that /usr/bin/chromium runs it (on Debian or Ubuntu: apt-get install chromium), then run the tests again.`,
    );
  if (process.getuid?.() !== 0)
    throw new Error(
      `${why}, and installing it needs root. Run:\n  sudo sh -c '${INSTALL}'\nthen run the tests again.`,
    );
  log(`${why}: installing it (${INSTALL}) …`);
  const started = Date.now();
  // Under flock when there is one: two test runs starting together install once, one after the
  // other; the second finds the browser there and does nothing.
  const script = `[ -x ${CHROMIUM} ] || { ${INSTALL}; }`;
  const hasFlock = spawnSync('flock', ['--version'], { stdio: 'ignore' }).status === 0;
  const argv = hasFlock
    ? ['flock', '/var/lock/dirigent-chromium-install.lock', 'sh', '-c', script]
    : ['sh', '-c', script];
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0 || !runnable(CHROMIUM)) {
    const output = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n');
    throw new Error(
      `Installing Chromium failed (${r.error?.message ?? `exit ${r.status}`}):\n${output}\nRun as root: ${INSTALL}`,
    );
  }
  log(`Chromium installed at ${CHROMIUM} in ${Math.round((Date.now() - started) / 1000)} s.`);
  return CHROMIUM;
}

/** Vitest's globalSetup hook: the console's project makes sure of the browser before its tests. */
export function setup() {
  ensureChromium();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    ensureChromium();
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}

/**
 * Bootstrap tools on real `dirigent worker` processes sharing a real Redis: a `once` tool runs
 * once per deployment and version whatever the number of workers, a `continuous` tool runs on one
 * worker at a time and moves to another when its worker dies or drains, and tools start in
 * priority and `wait_for` order. The tools are YAML tools on RYE's bash runtime writing to files of
 * the project.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { until } from '../support/dirigent-processes.js';
import { CLI_MAIN } from '../support/paths.js';
import { redisForTest } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

const redis = redisForTest();
let spawned: ChildProcess[] = [];
let root: string;
let project: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'dirigent-bootstrap-'));
  project = join(root, 'project');
  mkdirSync(join(root, 'user-space'), { recursive: true });
});
afterEach(async () => {
  const live = spawned.filter((p) => p.exitCode === null && p.signalCode === null);
  const exited = live.map((p) => new Promise((r) => p.once('exit', r)));
  for (const p of live) p.kill('SIGKILL');
  await Promise.all(exited);
  spawned = [];
  // Their tools die with them (each worker's reaper kills its tools' process groups).
  await waitFor(() => processesNaming(root).length === 0, {
    what: `the tools of the test's workers to end (${processesNaming(root).join(', ')})`,
  });
  rmSync(root, { recursive: true, force: true });
});

/** The pids of the processes whose command line names `path` (a tool is given its project). */
function processesNaming(path: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(path)) pids.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return pids;
}

const env = () => ({
  ...process.env,
  REDIS_URL: redis.url,
  DIRIGENT_PREFIX: redis.prefix,
  DIRIGENT_LOCK_MS: '2000',
  DIRIGENT_LOG_FORMAT: 'json',
  DIRIGENT_USER_SPACE: join(root, 'user-space'),
});

/** Writes the YAML tool `itemId` of the project, running `command` in bash ($2: the project). */
function writeTool(itemId: string, bootstrap: string, command: string, extra = ''): void {
  const file = join(project, '.ai', 'tools', `${itemId}.yaml`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    `version: 1.0.0\ntool_type: yaml\nexecutor_id: rye/core/runtimes/bash_runtime\ndescription: ${itemId}\nbootstrap: ${bootstrap}\nconfig:\n  command: ${JSON.stringify(command)}\n${extra}`,
  );
}

/** The lines of the project's file `name` (none when it does not exist yet). */
function lines(name: string): string[] {
  const file = join(project, name);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean);
}

/** A worker, and every message it logged. */
interface Worker {
  child: ChildProcess;
  messages: string[];
}

/**
 * `dirigent worker --project <project>`, once it serves (as `dirigentProcesses().worker`, but
 * keeping every line it logs from its start: bootstrap lines can follow the start line at once).
 */
function worker(): Promise<Worker> {
  const child = spawn(process.execPath, [CLI_MAIN, 'worker', '--project', project], {
    env: env(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  spawned.push(child);
  const messages: string[] = [];
  let rest = '';
  return new Promise((served, failed) => {
    child.stderr!.on('data', (c: Buffer) => {
      const all = (rest + c.toString()).split('\n');
      rest = all.pop()!;
      for (const line of all) {
        try {
          messages.push((JSON.parse(line) as { msg: string }).msg);
        } catch {
          messages.push(line);
        }
      }
      if (messages.some((m) => m.includes('jobs from'))) served({ child, messages });
    });
    child.once('exit', (code) =>
      failed(new Error(`worker exited (${code}): ${messages.join('\n')}`)),
    );
  });
}

const logged = (w: Worker, text: string) => w.messages.some((m) => m.includes(text));

/** Whether worker `w` has settled the `once` tool `itemId`: ran it to its end, or skipped it. */
const settledOnce = (w: Worker, itemId: string) =>
  logged(w, `"${itemId}" (once) finished`) ||
  logged(w, `"${itemId}" (once) failed`) ||
  logged(w, `"${itemId}" (once): skipped`);

/** Whether worker `w` has settled the `continuous` tool `itemId`: runs it, or stands by. */
const settledContinuous = (w: Worker, itemId: string) =>
  logged(w, `"${itemId}" (continuous) started on this worker`) ||
  logged(w, `"${itemId}" (continuous) runs on worker`);

/** The worker pids in a ticks file, in order, each once per run of lines. */
function blocks(ticks: string[]): string[] {
  const out: string[] = [];
  for (const t of ticks) {
    const pid = t.split(' ')[0]!;
    if (out[out.length - 1] !== pid) out.push(pid);
  }
  return out;
}

describe('bootstrap tools', { timeout: 90_000 }, () => {
  it('runs a once tool exactly once across workers starting together, and once per version', async () => {
    writeTool(
      'setup/seed',
      '{ enabled: true, mode: once }',
      'echo "seed $PPID" >> "$2/once.log"; sleep 0.5',
    );
    const three = await Promise.all([worker(), worker(), worker()]);
    const decided = (w: Worker) =>
      logged(w, '"setup/seed" (once) finished') || logged(w, '"setup/seed" (once): skipped');
    await until(() => three.every(decided), 20_000, 'the three workers to settle setup/seed');
    expect(lines('once.log')).toHaveLength(1);
    expect(three.filter((w) => logged(w, '"setup/seed" (once) finished'))).toHaveLength(1);
    expect(three.filter((w) => logged(w, 'skipped, this version already ran'))).toHaveLength(2);

    const fourth = await worker();
    await until(() => decided(fourth), 10_000, 'the fourth worker to skip setup/seed');
    expect(logged(fourth, 'skipped, this version already ran')).toBe(true);
    expect(lines('once.log')).toHaveLength(1);

    // A new version of the tool runs once more, however many workers start with it.
    writeTool(
      'setup/seed',
      '{ enabled: true, mode: once }',
      'echo "seed v2 $PPID" >> "$2/once.log"; sleep 0.5',
    );
    const two = await Promise.all([worker(), worker()]);
    await until(() => two.every(decided), 20_000, 'two new workers to settle setup/seed v2');
    expect(lines('once.log')).toHaveLength(2);
    expect(lines('once.log')[1]).toMatch(/^seed v2 /);
  });

  it('takes over a once tool whose worker died mid-run, and records a failure for good', async () => {
    writeTool(
      'setup/seed',
      '{ enabled: true, mode: once, priority: 90 }',
      'echo "seed $PPID" >> "$2/once.log"',
    );
    writeTool('setup/fail', '{ enabled: true, mode: once, priority: 80 }', 'echo no >&2; exit 1');
    writeTool(
      'setup/after-fail',
      '{ enabled: true, mode: once, wait_for: [setup/fail] }',
      'echo "after" >> "$2/once.log"',
    );
    // A worker that died while running setup/seed: its claim is left, with a TTL nobody renews.
    const seed = join(project, '.ai', 'tools', 'setup', 'seed.yaml');
    const hash = createHash('sha256').update(readFileSync(seed, 'utf8')).digest('hex');
    const key = `${redis.prefix}:bootstrap:setup/seed:${hash}`;
    const dead = { state: 'running', worker: 'gone:1', claim: 'x', started_at: '' };
    // Long enough to outlast the worker's start on a busy machine, so that it finds the claim.
    await redis.redis.set(key, JSON.stringify(dead), 'PX', 5000);

    const w = await worker();
    await until(() => lines('once.log').length > 0, 15_000, 'the takeover');
    expect(logged(w, '"setup/seed" (once): runs on worker gone:1; waiting')).toBe(true);
    await until(() => logged(w, 'which failed or did not start'), 15_000, 'setup/fail to end');
    expect(JSON.parse((await redis.redis.get(key))!)).toMatchObject({ state: 'done' });
    expect(await redis.redis.pttl(key)).toBe(-1);

    const failKey = (await redis.redis.keys(`${redis.prefix}:bootstrap:setup/fail:*`))[0]!;
    expect(JSON.parse((await redis.redis.get(failKey))!)).toMatchObject({
      state: 'failed',
      error: { code: 'TOOL_FAILED' },
    });
    expect(logged(w, '"setup/fail" (once) failed: TOOL_FAILED')).toBe(true);
    expect(logged(w, '"setup/after-fail" (once) will not start: it waits for "setup/fail"')).toBe(
      true,
    );
    expect(lines('once.log')).toHaveLength(1);

    // A failed version is not run again by the next worker.
    const next = await worker();
    await until(() => logged(next, '"setup/fail" (once): skipped'), 10_000, 'the skip');
  });

  it('runs a continuous tool on one worker at a time; another takes over when it dies or drains', async () => {
    // Ticks until its worker is gone (a worker killed outright cannot stop its tool).
    writeTool(
      'svc/ticker',
      '{ enabled: true, mode: continuous, priority: 90 }',
      'while kill -0 $PPID 2>/dev/null; do echo "$PPID $$" >> "$2/ticks.log"; sleep 0.05; done',
    );
    const workers = await Promise.all([worker(), worker(), worker()]);
    await waitFor(() => workers.every((w) => settledContinuous(w, 'svc/ticker')), {
      what: 'each worker to run svc/ticker or stand by',
      timeoutMs: 15_000,
    });
    await waitFor(() => lines('ticks.log').length >= 10, { what: 'ten ticks' });
    const first = blocks(lines('ticks.log'));
    expect(first, 'one worker runs it').toHaveLength(1);
    const holder = workers.find((w) => String(w.child.pid) === first[0])!;
    expect(logged(holder, '"svc/ticker" (continuous) started on this worker')).toBe(true);
    expect(workers.filter((w) => logged(w, 'this worker stands by')).length).toBeGreaterThan(0);

    holder.child.kill('SIGKILL');
    await until(
      () => blocks(lines('ticks.log')).length >= 2,
      15_000,
      'another worker to take over',
    );
    // Ten ticks of the new holder: had the dead worker's tool lived on, the two would interleave.
    const ticksOf = (pid: string) => lines('ticks.log').filter((t) => t.startsWith(`${pid} `));
    const taker = blocks(lines('ticks.log'))[1]!;
    await waitFor(() => ticksOf(taker).length >= 10, { what: 'ten ticks of the new holder' });
    const second = blocks(lines('ticks.log'));
    expect(second, 'the two never overlap').toHaveLength(2);
    expect(new Set(second).size).toBe(2);

    // A drained worker stops its tool and releases the lease: the last worker takes over.
    const next = workers.find((w) => String(w.child.pid) === second[1])!;
    const exited = new Promise<number | null>((r) => next.child.once('exit', r));
    next.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(logged(next, 'stopped by the drain; lease released')).toBe(true);
    const stoppedAt = lines('ticks.log').length;
    await until(
      () => blocks(lines('ticks.log')).length >= 3,
      10_000,
      'the last worker to take over',
    );
    const last = blocks(lines('ticks.log'))[2]!;
    await waitFor(() => ticksOf(last).length >= 10, { what: 'ten ticks of the last holder' });
    const third = blocks(lines('ticks.log'));
    expect(third).toHaveLength(3);
    expect(new Set(third).size).toBe(3);
    // Nothing of the drained worker's tool after it stopped.
    expect(
      lines('ticks.log')
        .slice(stoppedAt)
        .every((t) => !t.startsWith(`${second[1]} `)),
    ).toBe(true);
  });

  it('starts tools in priority and wait_for order, and refuses bad declarations', async () => {
    const step = (name: string) =>
      `echo "${name} start" >> "$2/order.log"; sleep 0.3; echo "${name} end" >> "$2/order.log"`;
    writeTool('order/low', '{ enabled: true, mode: once, priority: 10 }', step('low'));
    writeTool('order/high', '{ enabled: true, mode: once, priority: 90 }', step('high'));
    writeTool(
      'order/after',
      '{ enabled: true, mode: once, priority: 100, wait_for: [order/low] }',
      step('after'),
    );
    writeTool(
      'order/svc',
      '{ enabled: true, mode: continuous, priority: 95, wait_for: [order/high] }',
      'echo "svc start" >> "$2/order.log"; while kill -0 $PPID 2>/dev/null; do sleep 0.1; done',
    );
    writeTool(
      'order/needs-svc',
      '{ enabled: true, mode: once, priority: 1, wait_for: [order/svc] }',
      step('needs-svc'),
    );
    writeTool(
      'order/orphan',
      '{ enabled: true, mode: once, wait_for: [order/missing] }',
      step('orphan'),
    );
    writeTool('order/broken', '{ enabled: true, mode: sometimes }', step('broken'));
    writeTool('order/off', '{ enabled: false, mode: once }', step('off'));

    const workers = await Promise.all([worker(), worker()]);
    await until(
      () => lines('order.log').includes('needs-svc end'),
      30_000,
      'the last tool to finish',
    );
    // Both workers have settled every tool: nothing more starts.
    const once = ['order/low', 'order/high', 'order/after', 'order/needs-svc'];
    await waitFor(
      () =>
        workers.every(
          (w) => once.every((id) => settledOnce(w, id)) && settledContinuous(w, 'order/svc'),
        ),
      { what: 'both workers to settle every bootstrap tool', timeoutMs: 15_000 },
    );
    const log = lines('order.log');
    const at = (line: string) => {
      expect(log, line).toContain(line);
      return log.indexOf(line);
    };
    // Each once tool ran once in the deployment, in order.
    expect(log.filter((l) => l.endsWith(' start'))).toHaveLength(5);
    expect(at('high end')).toBeLessThan(at('low start')); // priority 90 before 10
    expect(at('low end')).toBeLessThan(at('after start')); // wait_for beats priority 100
    expect(at('high end')).toBeLessThan(at('svc start'));
    expect(at('svc start')).toBeLessThan(at('needs-svc start'));
    expect(log.some((l) => /orphan|broken|off/.test(l))).toBe(false);

    for (const w of workers) {
      expect(logged(w, 'waits for "order/missing", which is not a bootstrap tool')).toBe(true);
      expect(logged(w, '`bootstrap.mode` must be once, continuous or disabled')).toBe(true);
    }
  });
});

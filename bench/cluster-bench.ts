/**
 * Beyond one Redis: the same runs on one Redis and on a local Redis Cluster of three primaries, at
 * 1, 3 and 6 shards, in the same rounds. A worker and a client in this process; Redis servers of
 * the bench's own on loopback ports, without persistence on either side. On 2 cores the three
 * nodes share the CPUs with the worker, so the rates say little of a real cluster: beside them,
 * the Redis commands and Redis CPU each step costs, per node, say where the load goes. The point
 * is that nothing serialises on one slot: at 6 shards every primary takes an even share.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Dirigent } from '../src/operations/dirigent.js';
import { SILENT_LOGGER } from '../src/telemetry/logger.js';
import { DirigentWorker } from '../src/worker/dirigent-worker.js';
import { benchRow, withinRounds } from './bench-row.js';
import type { BenchSection } from './bench-section.js';
import { echoSequenceDirective } from './echo-sequence-directive.js';
import { LocalCluster } from './local-redis/local-cluster.js';
import { SentinelGroup } from './local-redis/sentinel-group.js';
import { answers, freePort, stop } from './local-redis/loopback.js';
import { median } from './median.js';

/** The sizes measured. */
export interface ClusterBenchOptions {
  rounds: number;
  /** Runs started at once per measurement. */
  runs: number;
  /** Steps of each run of the steps measurement. */
  steps: number;
}

/** One deployment measured: its Redis, its number of shards, the nodes whose load is read. */
interface Setup {
  name: string;
  url: string;
  shards: number;
  ports: number[];
  /** The worker's environment, when it differs (the replica wait). */
  env?: Record<string, string>;
}

/** What one measurement took: wall time, and per node the commands and CPU seconds it cost. */
interface Measured {
  ms: number;
  commands: number[];
  cpu: number[];
}

/** Measures every setup in the same rounds; one section. */
export async function clusterBench(options: ClusterBenchOptions): Promise<BenchSection> {
  const root = mkdtempSync(join(tmpdir(), 'dirigent-cluster-bench-'));
  const project = join(root, 'project');
  for (const [folder, steps] of [
    ['seq', options.steps],
    ['one', 1],
  ] as const) {
    const dir = join(project, '.ai', 'directives', folder);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'echo-sequence.md'), echoSequenceDirective(steps).text);
  }
  const single = await plainRedis(root);
  const cluster = await LocalCluster.start(3);
  const sentinel = await SentinelGroup.start();
  const primary = await sentinel.primaryPort();
  const setups: Setup[] = [
    { name: 'one Redis', url: `redis://127.0.0.1:${single.port}`, shards: 1, ports: [single.port] },
    ...[1, 3, 6].map((shards) => ({
      name: `cluster of 3, ${shards} shard${shards === 1 ? '' : 's'}`,
      url: cluster.url,
      shards,
      ports: cluster.ports,
    })),
    // A step's end waits for the replica (the default on Sentinel), or does not.
    ...[1, 0].map((wait) => ({
      name: `Sentinel, ${wait === 1 ? 'waiting for the replica' : 'not waiting'}`,
      url: sentinel.url,
      shards: 1,
      ports: [primary],
      env: { DIRIGENT_REPLICA_WAIT: String(wait) },
    })),
  ];
  const steps = new Map<string, Measured[]>(setups.map((s) => [s.name, []]));
  const runs = new Map<string, Measured[]>(setups.map((s) => [s.name, []]));
  try {
    for (let round = 0; round < options.rounds; round++) {
      // The side that goes first turns each round.
      const order = setups.map((_, i) => setups[(i + round) % setups.length]!);
      for (const setup of order) {
        const prefix = `cb-${setup.shards}-${setup.env?.DIRIGENT_REPLICA_WAIT ?? ''}-${round}`;
        await deployed(setup, prefix, project, async (dirigent) => {
          await startAll(dirigent, 'one/echo-sequence', 20); // warm: scripts loaded, keys made
          steps
            .get(setup.name)!
            .push(
              await measure(setup, () => startAll(dirigent, 'seq/echo-sequence', options.runs)),
            );
          runs
            .get(setup.name)!
            .push(
              await measure(setup, () => startAll(dirigent, 'one/echo-sequence', options.runs)),
            );
        });
      }
    }
  } finally {
    await cluster.stop();
    await sentinel.stop();
    await stop(single.child);
    rmSync(root, { recursive: true, force: true });
  }
  return section(setups, steps, runs, options);
}

/** A Redis of the bench's own, kept in memory only, as the cluster's nodes are. */
async function plainRedis(dir: string): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore', cwd: dir },
  );
  await answers(port);
  return { port, child };
}

/** Runs `work` with a worker and a client on `setup` under `prefix`, then closes both. */
async function deployed(
  setup: Setup,
  prefix: string,
  project: string,
  work: (dirigent: Dirigent) => Promise<void>,
): Promise<void> {
  const options = { redis: setup.url, prefix, project, shards: setup.shards };
  const worker = await DirigentWorker.start({
    ...options,
    logger: SILENT_LOGGER,
    queues: ['runs', 'tools'],
    env: { ...process.env, ...setup.env },
  });
  const dirigent = await Dirigent.open(options);
  try {
    await work(dirigent);
  } finally {
    await dirigent.close();
    await worker.close();
  }
}

/** Starts `count` runs of `directive` at once and waits for them all to complete. */
async function startAll(dirigent: Dirigent, directive: string, count: number): Promise<void> {
  const handles = await Promise.all(
    Array.from({ length: count }, () => dirigent.start({ directive, inputs: {} })),
  );
  const records = await Promise.all(handles.map((h) => h.wait()));
  const bad = records.find((r) => r.status !== 'completed');
  if (bad !== undefined) throw new Error(`run ${bad.runId} ${bad.status}: ${bad.error?.message}`);
}

/** Times `work`, and reads what it cost each node of `setup`. */
async function measure(setup: Setup, work: () => Promise<void>): Promise<Measured> {
  const before = await Promise.all(setup.ports.map(nodeLoad));
  const at = performance.now();
  await work();
  const ms = performance.now() - at;
  const after = await Promise.all(setup.ports.map(nodeLoad));
  return {
    ms,
    commands: after.map((a, i) => a.commands - before[i]!.commands),
    cpu: after.map((a, i) => a.cpu - before[i]!.cpu),
  };
}

/** A node's commands processed and CPU seconds used so far. */
async function nodeLoad(port: number): Promise<{ commands: number; cpu: number }> {
  const node = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  try {
    const info = await node.info();
    const field = (name: string) => Number(new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1]);
    return {
      // Less the INFO commands this reading sends itself.
      commands: field('total_commands_processed'),
      cpu: field('used_cpu_user') + field('used_cpu_sys'),
    };
  } finally {
    node.disconnect();
  }
}

function section(
  setups: Setup[],
  steps: Map<string, Measured[]>,
  runs: Map<string, Measured[]>,
  o: ClusterBenchOptions,
): BenchSection {
  const [base, ...rest] = setups;
  const baseSteps = steps.get(base!.name)!;
  const baseRuns = runs.get(base!.name)!;
  const perStep = (m: Measured) => (m.ms * 1000) / (o.runs * o.steps);
  const perRun = (m: Measured) => (m.ms * 1000) / o.runs;
  const ratio = (s: number, b: number) => b / s;
  const rows = [
    benchRow(
      `${o.runs} runs of ${o.steps} echo steps at once, one Redis: per step`,
      baseSteps.map(perStep),
      'steps/s',
    ),
    ...rest.map((s) =>
      benchRow(
        `… on a ${s.name}`,
        steps.get(s.name)!.map(perStep),
        'steps/s',
        `${withinRounds(steps.get(s.name)!.map(perStep), baseSteps.map(perStep), ratio).toFixed(2)}× one Redis's rate`,
      ),
    ),
    benchRow(`${o.runs} one-step runs at once, one Redis: per run`, baseRuns.map(perRun), 'runs/s'),
    ...rest.map((s) =>
      benchRow(
        `… on a ${s.name}`,
        runs.get(s.name)!.map(perRun),
        'runs/s',
        `${withinRounds(runs.get(s.name)!.map(perRun), baseRuns.map(perRun), ratio).toFixed(2)}× one Redis's rate`,
      ),
    ),
  ];
  const six = setups.find((s) => s.shards === 6 && s.ports.length === 3)!;
  const spread = nodeSpread(steps.get(six.name)!);
  rows.push({
    ...benchRow(
      `${o.runs} runs of ${o.steps} steps on a cluster of 3, 6 shards: busiest node / idlest node`,
      steps.get(six.name)!.map(perStep),
      'steps/s',
      `**${spread.toFixed(2)}** (Redis commands per node)`,
      { text: '≤ 1.5 at 6 shards', met: () => spread <= 1.5 },
    ),
  });
  const waiting = setups.find((s) => s.env?.DIRIGENT_REPLICA_WAIT === '1')!;
  const notWaiting = setups.find((s) => s.env?.DIRIGENT_REPLICA_WAIT === '0')!;
  const waitCost = withinRounds(
    steps.get(waiting.name)!.map(perStep),
    steps.get(notWaiting.name)!.map(perStep),
    (s, b) => s - b,
  );
  return {
    title:
      'Beyond one Redis: a local Redis Cluster of three primaries, and Sentinel, against one Redis',
    rows,
    notes: [
      'A `DirigentWorker` (runs and tools, eager calls) and a client in this process, on one ' +
        "Redis of the bench's own and on a cluster of three primaries made by `redis-cli --cluster " +
        'create` (`bench/local-redis/`), neither persisting anything; a fresh prefix per ' +
        'measurement, warmed by 20 runs. The setups take turns going first, round after round.',
      `Redis per step (${o.steps}-step runs), by setup: ${setups
        .map((s) => `${s.name}: ${costs(steps.get(s.name)!, o.runs * o.steps)}`)
        .join('; ')}. Per one-step run: ${setups
        .map((s) => `${s.name}: ${costs(runs.get(s.name)!, o.runs)}`)
        .join('; ')}.`,
      `On Sentinel (a primary, a replica and three sentinels of the bench's own), a step's end ` +
        `that waits for the replica (\`WAIT 1\`, the default there) costs ${waitCost.toFixed(0)} µs ` +
        'more per step than one that does not, median over rounds.',
      'On 2 cores the three nodes, the worker and the client share the CPUs, so a cluster here is ' +
        'slower than one Redis: each step pays for more connections and processes on the same ' +
        'cores. What carries to real machines is the commands and CPU a step costs each node, and ' +
        'that at 1 shard one node takes it all while at 3 and 6 each takes a share.',
    ],
  };
}

/** Commands and Redis CPU per operation, in all and by node, medians over rounds. */
function costs(measured: Measured[], ops: number): string {
  const nodes = measured[0]!.commands.length;
  const byNode = (f: (m: Measured) => number[]) =>
    Array.from({ length: nodes }, (_, i) => median(measured.map((m) => f(m)[i]! / ops)));
  const commands = byNode((m) => m.commands);
  const cpu = byNode((m) => m.cpu);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const each = nodes > 1 ? ` (${commands.map((c) => c.toFixed(1)).join(' / ')} by node)` : '';
  return `${sum(commands).toFixed(1)} commands${each}, ${(sum(cpu) * 1e6).toFixed(0)} µs of Redis CPU`;
}

/** The busiest node's commands over the idlest's, median over rounds. */
function nodeSpread(measured: Measured[]): number {
  return median(
    measured.map((m) => Math.max(...m.commands) / Math.max(1, Math.min(...m.commands))),
  );
}

/**
 * Beyond one Redis: the same runs on one Redis and on a local Redis Cluster of three primaries, at
 * 1, 3 and 6 shards, and on Sentinel, in the same rounds. A worker and a client in this process;
 * Redis servers of the bench's own on loopback ports, without persistence on any side. On 2 cores
 * the three nodes share the CPUs with the worker, so the rates say little of a real cluster:
 * beside them, the Redis commands and Redis CPU each step costs, per node, say where the load
 * goes. The point is that nothing serialises on one slot: at 6 shards every primary takes an even
 * share.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { RunRecord } from '../src/engine/run-record.js';
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
  /** Runs of `steps` steps started at once per steps measurement. */
  runs: number;
  /** Steps of each run of the steps measurement. */
  steps: number;
  /** One-step runs started at once per runs measurement. */
  oneStepRuns: number;
}

/** The goal: at 6 shards on 3 primaries, the busiest node's commands over the idlest's. */
export const CLUSTER_GOALS = { spread: 1.5 } as const;

/** Runs started (and waited for) before the timing, per directive and deployment. */
const WARM_RUNS = 10;

/** One deployment measured: its Redis, its number of shards, the nodes whose load is read. */
interface Setup {
  name: string;
  url: string;
  shards: number;
  ports: number[];
  /** Whether `ports` are a cluster's primaries (the load is compared across them). */
  cluster: boolean;
  /** The worker's environment, when it differs (the replica wait). */
  env?: Record<string, string>;
}

/**
 * What one measurement took: wall time; per node, busiest first, the commands and CPU seconds it
 * cost; and this process's CPU (worker and client), µs.
 */
interface Measured {
  ms: number;
  commands: number[];
  cpu: number[];
  nodeCpuUs: number;
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
    writeFileSync(join(dir, 'echo-sequence.md'), withOutputs(steps));
  }
  const cleanup: (() => Promise<void>)[] = [];
  const steps = new Map<string, Measured[]>();
  const runs = new Map<string, Measured[]>();
  let setups: Setup[] = [];
  try {
    const single = await plainRedis(root);
    cleanup.push(() => stop(single.child));
    const cluster = await LocalCluster.start(3);
    cleanup.push(() => cluster.stop());
    const sentinel = await SentinelGroup.start();
    cleanup.push(() => sentinel.stop());
    const primary = await sentinel.primaryPort();
    setups = [
      {
        name: 'one Redis',
        url: `redis://127.0.0.1:${single.port}`,
        shards: 1,
        ports: [single.port],
        cluster: false,
      },
      ...[1, 3, 6].map((shards) => ({
        name: `cluster of 3, ${shards} shard${shards === 1 ? '' : 's'}`,
        url: cluster.url,
        shards,
        ports: cluster.ports,
        cluster: true,
      })),
      // A step's end waits for the replica (the default on Sentinel), or does not.
      ...[1, 0].map((wait) => ({
        name: `Sentinel, ${wait === 1 ? 'waiting for the replica' : 'not waiting'}`,
        url: sentinel.url,
        shards: 1,
        ports: [primary],
        cluster: false,
        env: { DIRIGENT_REPLICA_WAIT: String(wait) },
      })),
    ];
    for (const s of setups) {
      steps.set(s.name, []);
      runs.set(s.name, []);
    }
    for (let round = 0; round < options.rounds; round++) {
      // The side that goes first turns each round.
      const order = setups.map((_, i) => setups[(i + round) % setups.length]!);
      for (const setup of order) {
        // A fresh prefix each time: a deployment records its number of shards.
        const prefix = `cb-${setup.shards}-${setup.env?.DIRIGENT_REPLICA_WAIT ?? ''}-${round}`;
        await deployed(setup, prefix, project, async (dirigent) => {
          // Warm: scripts loaded, directives compiled, keys and consumers made.
          await startAll(dirigent, 'one/echo-sequence', WARM_RUNS, 1);
          await startAll(dirigent, 'seq/echo-sequence', WARM_RUNS, options.steps);
          steps
            .get(setup.name)!
            .push(
              await measure(setup, () =>
                startAll(dirigent, 'seq/echo-sequence', options.runs, options.steps),
              ),
            );
          runs
            .get(setup.name)!
            .push(
              await measure(setup, () =>
                startAll(dirigent, 'one/echo-sequence', options.oneStepRuns, 1),
              ),
            );
        });
      }
    }
  } finally {
    for (const close of cleanup.reverse()) await close();
    rmSync(root, { recursive: true, force: true });
  }
  return section(setups, steps, runs, options);
}

/**
 * The echo sequence of `steps` steps, with outputs that prove each run went through all of them
 * with its own inputs: the last step's index and the label it echoed.
 */
function withOutputs(steps: number): string {
  const last = `s${steps - 1}`;
  return echoSequenceDirective(steps).text.replace(
    '</process>',
    `</process>
  <outputs>
    <output name="last" value="\${steps.${last}.result.i}">The last step's index</output>
    <output name="label" value="\${steps.${last}.result.run}">The label the last step echoed</output>
  </outputs>`,
  );
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
  try {
    const dirigent = await Dirigent.open(options);
    try {
      await work(dirigent);
    } finally {
      await dirigent.close();
    }
  } finally {
    await worker.close();
  }
}

/**
 * Starts `count` runs of `directive` (of `steps` steps) at once, each with a label of its own,
 * and waits for them all; throws unless every one completed every step with its own label out.
 */
async function startAll(
  dirigent: Dirigent,
  directive: string,
  count: number,
  steps: number,
): Promise<void> {
  const labels = Array.from({ length: count }, (_, i) => `run-${i}`);
  const handles = await Promise.all(
    labels.map((label) => dirigent.start({ directive, inputs: { label } })),
  );
  const records = await Promise.all(handles.map((h) => h.wait()));
  records.forEach((r, i) => {
    const wrong = wrongRun(r, steps, labels[i]!);
    if (wrong !== undefined)
      throw new Error(`cluster bench: run ${r.runId} of ${directive} ${wrong}`);
  });
}

/** What is wrong with a run that should have completed `steps` steps echoing `label`, if any. */
function wrongRun(r: RunRecord, steps: number, label: string): string | undefined {
  if (r.status !== 'completed')
    return `ended ${r.status}${r.error ? `: ${r.error.code} ${r.error.message}` : ''}`;
  const done = r.steps.filter((s) => s.status === 'completed').length;
  if (r.steps.length !== steps || done !== steps)
    return `has ${r.steps.length} step entries (${done} completed), expected ${steps}`;
  const outputs = r.outputs ?? {};
  if (String(outputs.last) !== String(steps - 1) || outputs.label !== label)
    return `output ${JSON.stringify(outputs)}, expected last ${steps - 1} and label ${label}`;
  return undefined;
}

/** Times `work`, and reads what it cost each node of `setup` and this process. */
async function measure(setup: Setup, work: () => Promise<void>): Promise<Measured> {
  const nodes = setup.ports.map(
    (port) => new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1, enableReadyCheck: false }),
  );
  try {
    const before = await Promise.all(nodes.map(nodeLoad));
    const cpuBefore = process.cpuUsage();
    const at = performance.now();
    await work();
    const ms = performance.now() - at;
    const cpu = process.cpuUsage(cpuBefore);
    const after = await Promise.all(nodes.map(nodeLoad));
    const byNode = after.map((a, i) => ({
      // Less the one INFO of the reading before (a reading does not count itself).
      commands: a.commands - before[i]!.commands - 1,
      cpu: a.cpu - before[i]!.cpu,
    }));
    // Busiest first: which node holds a shard's slot changes with the prefix, round to round.
    byNode.sort((a, b) => b.commands - a.commands);
    return {
      ms,
      commands: byNode.map((n) => n.commands),
      cpu: byNode.map((n) => n.cpu),
      nodeCpuUs: cpu.user + cpu.system,
    };
  } finally {
    for (const node of nodes) node.disconnect();
  }
}

/** A node's commands processed and CPU seconds used so far. */
async function nodeLoad(node: Redis): Promise<{ commands: number; cpu: number }> {
  const info = await node.info();
  const field = (name: string) => {
    const value = Number(new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1]);
    if (!Number.isFinite(value)) throw new Error(`cluster bench: no ${name} in INFO`);
    return value;
  };
  return {
    commands: field('total_commands_processed'),
    cpu: field('used_cpu_user') + field('used_cpu_sys'),
  };
}

function section(
  setups: Setup[],
  steps: Map<string, Measured[]>,
  runs: Map<string, Measured[]>,
  o: ClusterBenchOptions,
): BenchSection {
  const [base, ...rest] = setups;
  const stepOps = o.runs * o.steps;
  const perStep = (m: Measured) => (m.ms * 1000) / stepOps;
  const perRun = (m: Measured) => (m.ms * 1000) / o.oneStepRuns;
  const redisCpuPerStep = (m: Measured) => (sum(m.cpu) * 1e6) / stepOps;
  /** The rate of `s` over the baseline's, within rounds (both µs per op). */
  const rate = (s: number[], b: number[]) => withinRounds(s, b, (x, y) => y / x).toFixed(2);
  const rateRows = (
    title: string,
    measured: Map<string, Measured[]>,
    timing: (m: Measured) => number,
    unit: string,
    ops: number,
    per: string,
  ) => {
    const baseline = measured.get(base!.name)!.map(timing);
    return [
      benchRow(
        `${title}, one Redis: per ${per}`,
        baseline,
        unit,
        `baseline; ${load(measured.get(base!.name)!, ops, per)}`,
      ),
      ...rest.map((s) =>
        benchRow(
          `… on a ${s.name}`,
          measured.get(s.name)!.map(timing),
          unit,
          `${rate(measured.get(s.name)!.map(timing), baseline)}× one Redis's rate; ` +
            load(measured.get(s.name)!, ops, per),
        ),
      ),
    ];
  };
  const clusters = setups.filter((s) => s.cluster);
  const baseCpu = steps.get(base!.name)!.map(redisCpuPerStep);
  const six = clusters.find((s) => s.shards === 6)!;
  const spread = nodeSpread(steps.get(six.name)!);
  const runSpread = nodeSpread(runs.get(six.name)!);
  const waiting = setups.find((s) => s.env?.DIRIGENT_REPLICA_WAIT === '1')!;
  const notWaiting = setups.find((s) => s.env?.DIRIGENT_REPLICA_WAIT === '0')!;
  const waitCost = withinRounds(
    steps.get(waiting.name)!.map(perStep),
    steps.get(notWaiting.name)!.map(perStep),
    (s, b) => s - b,
  );
  const nodeCpu = (s: Setup) =>
    `${median(steps.get(s.name)!.map((m) => m.nodeCpuUs / stepOps)).toFixed(0)} µs`;
  return {
    title:
      'Beyond one Redis: a local Redis Cluster of three primaries, and Sentinel, against one Redis',
    rows: [
      ...rateRows(
        `${o.runs} runs of ${o.steps} echo steps at once`,
        steps,
        perStep,
        'steps/s',
        stepOps,
        'step',
      ),
      ...rateRows(
        `${o.oneStepRuns} one-step runs at once`,
        runs,
        perRun,
        'runs/s',
        o.oneStepRuns,
        'run',
      ),
      benchRow(
        `Redis CPU per step (${o.steps}-step runs), all nodes summed, one Redis`,
        baseCpu,
        'steps per Redis CPU-second',
        `baseline; this process (worker and client) ${nodeCpu(base!)} of CPU per step`,
      ),
      ...clusters.map((s) =>
        benchRow(
          `… on a ${s.name}`,
          steps.get(s.name)!.map(redisCpuPerStep),
          'steps per Redis CPU-second',
          `${withinRounds(steps.get(s.name)!.map(redisCpuPerStep), baseCpu, (x, y) => x / y).toFixed(2)}× ` +
            `one Redis's CPU per step (${cpuByNode(steps.get(s.name)!, stepOps)} µs by node); ` +
            `this process ${nodeCpu(s)}`,
        ),
      ),
      benchRow(
        `${o.runs} runs of ${o.steps} steps on a cluster of 3, 6 shards: Redis commands of the busiest node over the idlest's`,
        steps.get(six.name)!.map(perStep),
        'steps/s',
        `**${spread.toFixed(2)}** (one-step runs: ${runSpread.toFixed(2)})`,
        {
          text: `≤ ${CLUSTER_GOALS.spread} at 6 shards`,
          met: () => spread <= CLUSTER_GOALS.spread && runSpread <= CLUSTER_GOALS.spread,
        },
      ),
    ],
    notes: [
      'A `DirigentWorker` (runs and tools, eager calls, default concurrency shared out among the ' +
        "shards) and a `Dirigent` client in this process, on one Redis of the bench's own, on a " +
        'cluster of three primaries made by `redis-cli --cluster create` and on Sentinel (a ' +
        'primary, a replica and three sentinels), all on loopback ports (`bench/local-redis/`), ' +
        'none persisting anything; a fresh prefix per setup and round, warmed by ' +
        `${WARM_RUNS} runs of each directive. Runs are started with \`dirigent.start\` and ` +
        'waited for with `handle.wait()`; every run is checked: completed, every step completed, ' +
        'and its outputs (the last step index, its own input label) as expected. The setups take ' +
        'turns going first, round after round.',
      'Redis commands are `total_commands_processed` (`INFO`) of each node, before and after, ' +
        "divided by the steps or runs measured: the worker's and the client's (waits included), " +
        'those that scripts run counted too. By node, busiest first: which primary holds the one ' +
        "shard's slot changes with the prefix, round to round. Redis CPU is `used_cpu_user + " +
        'used_cpu_sys` of each node (on Sentinel, the primary only). Per one-step run: ' +
        `${setups.map((s) => `${s.name}: ${median(runs.get(s.name)!.map((m) => (sum(m.cpu) * 1e6) / o.oneStepRuns)).toFixed(0)} µs of Redis CPU`).join('; ')}.`,
      `On Sentinel, a step's end that waits for the replica (\`WAIT 1\`, the default there) takes ` +
        `${Math.abs(waitCost).toFixed(0)} µs ${waitCost >= 0 ? 'more' : 'less'} per step than one ` +
        'that does not, median over rounds: on loopback the replica answers at once, and the ' +
        'difference is within the noise of the rounds.',
      'On 2 cores the three nodes, the worker and the client share the CPUs, so a cluster here is ' +
        'no faster than one Redis: each step pays for more connections and processes on the same ' +
        'cores. What carries to real machines is the commands and CPU a step costs each node, and ' +
        'that at 1 shard one node takes it all while at 3 and 6 each takes an even share.',
    ],
  };
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

/** Redis commands per operation, in all and by node (busiest first), medians over rounds. */
function load(measured: Measured[], ops: number, per: string): string {
  const commands = byNode(measured, (m) => m.commands, ops);
  const each =
    commands.length > 1 ? ` (${commands.map((c) => c.toFixed(1)).join(' / ')} by node)` : '';
  return `${sum(commands).toFixed(1)} Redis commands per ${per}${each}`;
}

/** Redis CPU µs per operation by node, busiest first, medians over rounds. */
function cpuByNode(measured: Measured[], ops: number): string {
  return byNode(measured, (m) => m.cpu.map((c) => c * 1e6), ops)
    .map((c) => c.toFixed(0))
    .join(' / ');
}

function byNode(measured: Measured[], f: (m: Measured) => number[], ops: number): number[] {
  const nodes = measured[0]!.commands.length;
  return Array.from({ length: nodes }, (_, i) => median(measured.map((m) => f(m)[i]! / ops)));
}

/** The busiest node's commands over the idlest's, median over rounds. */
function nodeSpread(measured: Measured[]): number {
  return median(measured.map((m) => m.commands[0]! / Math.max(1, m.commands.at(-1)!)));
}

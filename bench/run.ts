/**
 * `npm run bench`: the parse+compile, engine, warm Python host, Deno sandbox, distributed (BullMQ
 * on Redis), takeover and telemetry overhead benchmarks, what a client sees (runs started through
 * the library and awaited), the HTTP API, batches, operating runs (a bulk cancel,
 * concurrency keys), and a local Redis Cluster (at 1, 3 and 6 shards) and Sentinel against one
 * Redis, in one process, each against its baseline in the same rounds. Prints a Markdown table
 * and writes it to docs/benchmarks.md.
 * `BENCH_ROUNDS` overrides the number of rounds (default 7). `BENCH_SECTIONS=distributed,cli`
 * runs only the named sections (see `SECTIONS`) and merges their tables into docs/benchmarks.md.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { benchmarkReport } from './benchmark-report.js';
import { compileBench } from './compile-bench.js';
import { denoBench } from './deno-bench.js';
import { distributedBench } from './distributed-bench.js';
import { engineBench } from './engine-bench.js';
import { pythonHostBench } from './python-host-bench.js';
import { telemetryBench } from './telemetry-bench.js';
import { apiBench } from './api-bench.js';
import { clientBench } from './client-bench.js';
import { batchBench } from './batch-bench.js';
import { searchBench } from './search-bench.js';
import { cliBench } from './cli-bench.js';
import { takeoverBench } from './takeover-bench.js';
import { builtinToolsBench } from './builtin-tools-bench.js';
import { operateBench } from './operate-bench.js';
import { memoryBench } from './memory-bench.js';
import { clusterBench } from './cluster-bench.js';
import { mergeSections } from './merge-sections.js';
import type { BenchSection } from './bench-section.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const started = performance.now();
const loadAtStart = loadavg()[0]!;
const file = join(process.cwd(), 'docs', 'benchmarks.md');

/** Every section, in the report's order, by the name `BENCH_SECTIONS` gives it. */
const SECTIONS = {
  compile: () => compileBench({ rounds, timeMs: 300, warmupMs: 100 }),
  engine: () =>
    engineBench({
      rounds,
      timeMs: 800,
      warmupMs: 150,
      loopIterations: 1000,
      sequenceSteps: 100,
      directBatch: 1000,
    }),
  python: () => pythonHostBench({ rounds }),
  deno: () => denoBench({ rounds }),
  distributed: () => distributedBench({ rounds: Math.min(rounds, 5) }),
  memory: () => memoryBench({ rounds: Math.min(rounds, 3) }),
  takeover: () => takeoverBench({ kills: 20 }),
  telemetry: (engine?: BenchSection) =>
    telemetryBench({
      rounds,
      timeMs: 800,
      warmupMs: 150,
      sequenceSteps: 100,
      runsPerIteration: 10,
      redisRounds: rounds,
      engineSequenceUs: engine?.rows.find((r) => r.name.includes('100 sequential echo steps'))?.us,
    }),
  client: () => clientBench({ rounds: Math.min(rounds, 3), runs: 3000 }),
  api: () => apiBench({ rounds: Math.min(rounds, 5), starts: 500, waits: 40 }),
  batch: () => batchBench({ lines: 100_000, redisLines: 30_000 }),
  search: () => searchBench({ rounds: Math.min(rounds, 5) }),
  cli: () => cliBench({ rounds }),
  tools: () => builtinToolsBench({ rounds: Math.min(rounds, 5) }),
  operate: () => operateBench({ rounds: 2, cancels: 10_000, keyedRuns: 2_000, keys: 20 }),
  cluster: () =>
    clusterBench({ rounds: Math.min(rounds, 3), runs: 1000, steps: 20, oneStepRuns: 2000 }),
} as const;
type SectionName = keyof typeof SECTIONS;

const only = (process.env.BENCH_SECTIONS ?? '').split(',').filter((s) => s !== '');
if (only.length > 0) {
  const unknown = only.filter((s) => !(s in SECTIONS));
  if (unknown.length > 0)
    throw new Error(
      `BENCH_SECTIONS: no section ${unknown.join(', ')} (known: ${Object.keys(SECTIONS).join(', ')})`,
    );
  const sections = [];
  for (const name of only) sections.push(await SECTIONS[name as SectionName]());
  const when = `${new Date().toISOString().slice(0, 10)}, load average ${loadAtStart.toFixed(1)}`;
  const merged = mergeSections(
    existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n',
    sections,
    when,
  );
  const report = await format(merged, { ...(await resolveConfig(file)), parser: 'markdown' });
  writeFileSync(file, report);
  console.log(report.slice(report.indexOf(`## ${sections[0]!.title}`)));
  process.exit(0);
}

const done = new Map<SectionName, BenchSection>();
// The telemetry section compares its embedded rows with the engine section's sequence.
for (const name of Object.keys(SECTIONS) as SectionName[])
  done.set(name, await SECTIONS[name](done.get('engine')));
const all = [...done.values()];

// Formatted as `npm run format` would, so that the written file passes `format:check`.
const report = await format(
  benchmarkReport(all, {
    date: new Date(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown CPU',
    rounds,
    load: [loadAtStart, loadavg()[0]!],
  }),
  { ...(await resolveConfig(file)), parser: 'markdown' },
);
console.log(report);
mkdirSync(join(process.cwd(), 'docs'), { recursive: true });
writeFileSync(file, report);
console.log(`Wrote docs/benchmarks.md in ${((performance.now() - started) / 1000).toFixed(0)} s.`);

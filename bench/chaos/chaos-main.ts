/**
 * `npm run chaos`: the chaos run (see `run-chaos.ts`) at full size: 2,000 runs while workers are
 * killed for 5 minutes. `CHAOS_MINUTES` and `CHAOS_RUNS` change the size. Prints the report and
 * exits 1 when anything was lost.
 */
import { join } from 'node:path';
import { formatChaosReport } from './format-chaos-report.js';
import { runChaos } from './run-chaos.js';

const minutes = Number(process.env.CHAOS_MINUTES ?? 5);
const runs = Number(process.env.CHAOS_RUNS ?? 2000);
const report = await runChaos({
  cli: join(process.cwd(), 'dist', 'cli', 'main.js'),
  durationMs: minutes * 60_000,
  runs,
  progress: (line) => console.error(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}`),
});
console.log(formatChaosReport(report));
process.exit(report.ok ? 0 : 1);

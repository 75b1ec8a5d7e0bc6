/**
 * Where a process that a section starts (a worker) spends its CPU: it runs under `node
 * --cpu-prof` (V8's sampling profiler, whose profile Node writes to a file as the process exits),
 * and each sample's time goes to the part of the code its innermost function belongs to: a
 * package, a folder of Dirigent's sources, the garbage collector, Node itself.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sharesOf, type CpuShares, type Frame, type Profile } from './cpu-shares.js';

/** Node's arguments that profile a process into `dir` (a sample every 250 µs), then `args`. */
export function profiledArgs(dir: string, args: string[]): string[] {
  return ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '250', ...args];
}

/**
 * The part of the code a frame belongs to: a package by its name (vendored ones too), Dirigent's sources by their
 * folder (`dirigent engine`, `dirigent redis`: the profiled process runs the CLI as tsc built it,
 * module by module, so that its files say where the time goes), `Node` for Node's own modules.
 */
export function codePartOf(frame: Frame): string {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'the garbage collector';
  if (url === '') return 'V8 and native code';
  if (url.startsWith('node:')) return 'Node';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1]!;
  // A package the build bundled into one file (`dist/vendor/xstate.cjs`).
  const vendored = /\/dist\/vendor\/(.+)\.cjs$/.exec(url);
  if (vendored) return vendored[1]!;
  const src = /\/dist\/src\/([^/]+)\//.exec(url);
  return src ? `dirigent ${src[1]}` : 'other';
}

/** The CPU shares of every profile in `dir` (a process writes one as it exits), by code part. */
export function sharesInDir(dir: string): CpuShares {
  const total: CpuShares = { totalMs: 0, byCategory: new Map() };
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
    const shares = sharesOf(profile, codePartOf);
    total.totalMs += shares.totalMs;
    for (const [part, ms] of shares.byCategory)
      total.byCategory.set(part, (total.byCategory.get(part) ?? 0) + ms);
  }
  if (total.totalMs === 0) throw new Error(`no CPU profile in ${dir}`);
  return total;
}

/** The largest `top` parts as shares of the whole: `the garbage collector 15%, bullmq 12%, …`. */
export function formatShares(shares: CpuShares, top = 8): string {
  const parts = [...shares.byCategory].sort((a, b) => b[1] - a[1]);
  const shown = parts
    .slice(0, top)
    .map(([part, ms]) => `${part} ${Math.round((100 * ms) / shares.totalMs)}%`);
  const rest = parts.slice(top).reduce((sum, [, ms]) => sum + ms, 0);
  if (rest > 0) shown.push(`the rest ${Math.round((100 * rest) / shares.totalMs)}%`);
  return shown.join(', ');
}

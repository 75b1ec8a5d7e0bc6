/**
 * What idle `dirigent worker` processes cost their Redis: the commands a private Redis processes
 * while the workers have nothing to do, counted from `INFO commandstats` (which counts the
 * commands scripts call, as `total_commands_processed` does), per worker and second.
 */
import type { Redis } from 'ioredis';

/** Commands per idle worker and second, in all and by command. */
export interface IdleCommands {
  perWorkerPerSecond: number;
  /** Command name → calls per worker and second, most called first. */
  byCommand: [string, number][];
  seconds: number;
}

/**
 * Counts the commands `conn`'s Redis processes over `seconds` while `workers` workers (and nothing
 * else) are connected to it and idle. The counting client's own commands are left out.
 */
export async function idleWorkerCommands(
  conn: Redis,
  workers: number,
  seconds: number,
): Promise<IdleCommands> {
  await conn.config('RESETSTAT');
  const started = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const stats = await conn.info('commandstats');
  const elapsed = (performance.now() - started) / 1000;
  const byCommand: [string, number][] = [];
  for (const m of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const name = m[1]!;
    if (name === 'info' || name.startsWith('config')) continue;
    byCommand.push([name, Number(m[2]) / workers / elapsed]);
  }
  byCommand.sort((a, b) => b[1] - a[1]);
  const perWorkerPerSecond = byCommand.reduce((sum, [, n]) => sum + n, 0);
  return { perWorkerPerSecond, byCommand, seconds: elapsed };
}

/**
 * Where a piece of work spends this thread's CPU: V8's sampling profiler (`node:inspector`) runs
 * while the work does, and each sample's time goes to the category its function's file falls in.
 * Samples in which the thread was idle are left out, so the figures are CPU time, not wall time.
 */
import { Session } from 'node:inspector/promises';

/** A profiled function's script and name, as V8 reports them. */
export interface Frame {
  url: string;
  functionName: string;
}

/** CPU time of the profiled work by category, ms, and its total. */
export interface CpuShares {
  totalMs: number;
  byCategory: Map<string, number>;
}

interface ProfileNode {
  id: number;
  callFrame: Frame;
}

/** A V8 CPU profile, as much of it as is read here. */
export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** V8's name for a sample taken while the thread had nothing to do. */
const IDLE = '(idle)';

/**
 * Profiles `work` (sampling every `intervalUs` µs) and sums each sample's time into the category
 * `categorize` gives its innermost frame: self time, so a category holds what its own functions
 * did, not what they called.
 */
export async function cpuShares(
  work: () => Promise<void>,
  categorize: (frame: Frame) => string,
  intervalUs = 250,
): Promise<CpuShares> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
    await session.post('Profiler.start');
    // Should the work throw, disconnecting (below) stops the profiler.
    await work();
    const { profile } = (await session.post('Profiler.stop')) as { profile: Profile };
    return sharesOf(profile, categorize);
  } finally {
    session.disconnect();
  }
}

/**
 * Sums the samples of a V8 CPU profile (the `Profiler.stop` answer, or a `.cpuprofile` file that
 * `node --cpu-prof` wrote) into the categories `categorize` gives their innermost frames.
 */
export function sharesOf(profile: Profile, categorize: (frame: Frame) => string): CpuShares {
  const category = new Map<number, string | undefined>();
  for (const node of profile.nodes)
    category.set(
      node.id,
      node.callFrame.functionName === IDLE ? undefined : categorize(node.callFrame),
    );
  const byCategory = new Map<string, number>();
  let totalMs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const c = category.get(profile.samples[i]!);
    if (c === undefined) continue;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    byCategory.set(c, (byCategory.get(c) ?? 0) + ms);
    totalMs += ms;
  }
  return { totalMs, byCategory };
}

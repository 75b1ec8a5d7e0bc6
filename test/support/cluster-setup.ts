/**
 * The global setup of the `cluster` test project: a Redis Cluster of the tests' own (three
 * primaries on free loopback ports, never the machine's Redis), whose URL the project's tests
 * are given in place of the local Redis (`inject('redisUrl')`, see `redis.ts`), stopped after them.
 */
import type { TestProject } from 'vitest/node';
import { LocalCluster } from '../../bench/local-redis/local-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Redis the tests of a project use, when its setup started one. */
    redisUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await LocalCluster.start(3);
  project.provide('redisUrl', cluster.url);
  return () => cluster.stop();
}

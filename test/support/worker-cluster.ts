/**
 * A deployment of real `dirigent worker` processes on the real Redis, for the distributed tests:
 * a project folder and a key prefix of each test's own, workers that are serving once started, the
 * CLI on the same deployment, and every process a test started ended after it.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { writeDirective } from './directive-file.js';
import { dirigentProcesses } from './dirigent-processes.js';
import { REPO_ROOT } from './paths.js';
import { redisForTest } from './redis.js';

/** The worker as its own entry point (configured by the environment), beside `dirigent worker`. */
const WORKER_ENTRY = join(REPO_ROOT, 'dist', 'workers', 'worker.js');

/** The record `dirigent run --json` prints, as far as the tests read it. */
export interface RunJson {
  runId: string;
  status: string;
  outputs: Record<string, unknown> | null;
  steps: { name: string; status: string }[];
  error: { code: string } | null;
}

/** A step that runs `command` with the bash tool; `extra` goes into the step's tag. */
export const bashStep = (name: string, command: string, extra = '') =>
  `<step name="${name}"${extra}><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command}"/></execute></step>`;

/** Registers the hooks of a file's deployment (call at its top); see the module comment. */
export function workerCluster() {
  const redis = redisForTest();
  /** Every process a test starts (workers and CLI commands), killed after it if still running. */
  const processes = dirigentProcesses();
  let project: string | undefined;

  beforeEach(() => {
    project = mkdtempSync(join(tmpdir(), 'dirigent-dist-'));
  });
  afterEach(() => {
    if (project) rmSync(project, { recursive: true, force: true });
    project = undefined;
  });

  const here = (): string => {
    if (!project) throw new Error('workerCluster(): the project exists only inside a test.');
    return project;
  };
  const env = () => ({
    ...process.env,
    REDIS_URL: redis.url,
    DIRIGENT_PREFIX: redis.prefix,
    DIRIGENT_LOCK_MS: '2000',
  });
  const cli = (...args: string[]) => processes.cli(env(), ...args, '--project', here());

  return {
    redis,
    processes,
    /** The test's project folder. */
    get project(): string {
      return here();
    },
    env,
    /** Starts `dirigent worker` (or `dist/workers/worker.js`, set by the environment), serving. */
    startWorker(queues = 'runs,tools', entry: 'cli' | 'workers' = 'cli'): Promise<ChildProcess> {
      return entry === 'cli'
        ? processes.worker(env(), '--queues', queues, '--project', here())
        : processes.serving({ ...env(), DIRIGENT_QUEUES: queues, DIRIGENT_PROJECT: here() }, [
            WORKER_ENTRY,
          ]);
    },
    /** `dirigent …args --project <project>` on the deployment, once it exited. */
    cli,
    /** `dirigent run …args --json`, with the record it printed. */
    async runJson(...args: string[]) {
      const r = await cli('run', ...args, '--json');
      return { ...r, record: JSON.parse(r.stdout) as RunJson };
    },
    /** Writes directive `name` into the project; returns its file. */
    directive: (name: string, xml: string): string => writeDirective(here(), name, xml),
  };
}

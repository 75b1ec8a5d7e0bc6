/**
 * How a client sends the starts of runs to the runs queue: a start given its run id as a job of
 * its own whose id is the run's; other starts made in the same turn of the event loop
 * gathered into jobs of up to `startGroup` runs (see `start-group.ts`), whose run ids the group
 * names (`start-group-ids.ts`).
 */
import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { Attr } from '../../telemetry/attributes.js';
import type { RerunSeed } from '../../engine/rerun.js';
import { DEFAULT_JOB_PRIORITY, jobPriority } from '../../engine/run-priority.js';
import type { RunTags } from '../../engine/run-tags.js';
import type { RunTrace, RunTrigger } from '../../telemetry/run-trace.js';
import { SPAN_KIND, type Telemetry } from '../../telemetry/telemetry.js';
import { QueueName } from '../queue-names.js';
import { RUN_JOB_RETENTION } from '../queue-options.js';
import type { RunJobData, RunJobResult, RunSource, StartMember } from '../run-job.js';
import { groupJobId, groupRunIds, MAX_GROUP_RUNS } from './start-group-ids.js';
import { StartGatherer } from './start-gatherer.js';

/** How a client sends starts. */
export interface StartOptions {
  /**
   * Runs at most in one job of starts made together (default `DIRIGENT_START_GROUP`, else
   * {@link DEFAULT_START_GROUP}; 1 sends every start as a job of its own).
   */
  startGroup?: number;
  /**
   * Draws a new run id, or a group's key (a lower-case UUID): of one shard's runs when the
   * deployment has shards (`shards/shard-layout.ts`). Default: a random UUID.
   */
  newKey?: () => string;
}

/**
 * Runs at most in one job of starts, by default: as many as a worker drives at once by default
 * (its run slots), so one group can keep a worker busy, and a larger burst is several jobs, for
 * several workers.
 */
export const DEFAULT_START_GROUP = 50;

/**
 * `DIRIGENT_START_GROUP` (or its former name `DIRIGENT_START_BATCH`), else the default;
 * `INVALID_CONFIG` for a value that is not a whole number from 1 to 65,536.
 */
export function startGroupFromEnv(env: Record<string, string | undefined> = process.env): number {
  const name =
    env.DIRIGENT_START_GROUP !== undefined ? 'DIRIGENT_START_GROUP' : 'DIRIGENT_START_BATCH';
  const raw = env[name];
  if (raw === undefined || raw === '') return DEFAULT_START_GROUP;
  const n = Number(raw);
  if (Number.isInteger(n) && n >= 1 && n <= MAX_GROUP_RUNS) return n;
  throw DirigentError.fatal(
    ErrorCode.INVALID_CONFIG,
    `${name} is "${raw}": it must be a whole number from 1 to ${MAX_GROUP_RUNS}.`,
    {
      hint: 'Set it to the most runs one job of starts may hold (1 sends each start alone), or unset it.',
    },
  );
}

/**
 * The most input a group of starts carries, in JSON characters, past its first run (a run's inputs
 * may be up to a MiB by default): a burst of runs with large inputs is several jobs, not one huge.
 */
export const START_GROUP_INPUT_BYTES = 256 * 1024;

/** A start as the client gathers it. */
interface Start {
  source: RunSource;
  inputs: Record<string, unknown>;
  trigger: RunTrigger;
  tags?: RunTags;
  from?: RerunSeed;
}

/** How one start is sent. */
export interface SendOptions {
  /** The run's id: the start is a job of its own, under that id (else it may join a group). */
  runId?: string;
  trigger?: RunTrigger;
  tags?: RunTags;
  /** 1 to 10 (see `engine/run-priority.ts`): a start with a priority of its own is a job of its own. */
  priority?: number;
  from?: RerunSeed;
  /** Delay the start job this long (a run waiting for a slot of its concurrency key). */
  delayMs?: number;
}

/** Sends starts to the runs queue. */
export class StartSender {
  private readonly gathered: StartGatherer<Start>;
  private readonly newKey: () => string;

  constructor(
    private readonly queue: Queue<RunJobData, RunJobResult>,
    private readonly telemetry: Telemetry | undefined,
    options: StartOptions = {},
  ) {
    const most = options.startGroup ?? startGroupFromEnv();
    this.newKey = options.newKey ?? randomUUID;
    this.gathered = new StartGatherer(
      most,
      (starts) => this.send(starts),
      (start) => JSON.stringify(start.inputs).length,
      START_GROUP_INPUT_BYTES,
    );
  }

  /** Resolves with the run's id once the job that holds its start is in the queue. */
  async start(
    source: RunSource,
    inputs: Record<string, unknown>,
    options: SendOptions,
  ): Promise<string> {
    const start: Start = {
      source,
      inputs,
      trigger: options.trigger ?? 'library',
      ...(options.tags && { tags: options.tags }),
      ...(options.from && { from: options.from }),
    };
    const priority = jobPriority(options.priority);
    if (options.runId === undefined && priority === DEFAULT_JOB_PRIORITY && !options.delayMs)
      return this.gathered.add(start);
    const runId = options.runId ?? this.newKey();
    await this.sendOne(runId, start, priority, options.delayMs);
    return runId;
  }

  /** Sends what is gathered, and resolves once every start sent so far is in the queue. */
  settle(): Promise<void> {
    return this.gathered.settle();
  }

  /** Sends the starts gathered in one turn: one start as its own job, more as a group. */
  private async send(starts: readonly Start[]): Promise<string[]> {
    const key = this.newKey();
    if (starts.length === 1) {
      await this.sendOne(key, starts[0]!);
      return [key];
    }
    const runIds = groupRunIds(key, starts.length);
    const sources: RunSource[] = [];
    const sourceAt = new Map<string, number>();
    const runs = starts.map((s, i): StartMember => {
      const sourceKey = `${s.source.directive}\0${s.source.hash}`;
      let at = sourceAt.get(sourceKey);
      if (at === undefined) sourceAt.set(sourceKey, (at = sources.push(s.source) - 1));
      const runId = runIds[i]!;
      const trace = this.telemetry?.newRunTrace(runId, s.trigger);
      return {
        runId,
        source: at,
        inputs: s.inputs,
        trigger: s.trigger,
        ...(s.tags && { tags: s.tags }),
        ...(trace && { trace }),
      };
    });
    const jobId = groupJobId(key);
    const spans = runs.map((m, i) =>
      this.sendSpan(m.runId, jobId, sources[m.source]!, starts[i]!.trigger, m.trace),
    );
    try {
      await this.queue.add(
        'starts',
        { kind: 'starts', sources, runs },
        { jobId, priority: DEFAULT_JOB_PRIORITY, ...RUN_JOB_RETENTION },
      );
    } finally {
      for (const span of spans) span?.end();
    }
    return runIds;
  }

  /** Enqueues one start as a job of its own, whose id is the run's. */
  private async sendOne(
    runId: string,
    start: Start,
    priority = DEFAULT_JOB_PRIORITY,
    delayMs = 0,
  ): Promise<void> {
    const trace = this.telemetry?.newRunTrace(runId, start.trigger);
    const data: RunJobData = {
      kind: 'start',
      runId,
      ...start,
      ...(trace && { trace }),
    };
    const span = this.sendSpan(runId, runId, start.source, start.trigger, trace);
    try {
      await this.queue.add('start', data, {
        jobId: runId,
        priority,
        ...(delayMs > 0 && { delay: delayMs }),
        ...RUN_JOB_RETENTION,
      });
    } finally {
      span?.end();
    }
  }

  /**
   * The run's trace begins with handing it to the queue (in job `jobId`): a span under the run's
   * own.
   */
  private sendSpan(
    runId: string,
    jobId: string,
    source: RunSource,
    trigger: RunTrigger,
    trace?: RunTrace,
  ) {
    return (
      trace &&
      this.telemetry?.startSpan(
        `start ${source.directive}`,
        {
          kind: SPAN_KIND.PRODUCER,
          attributes: {
            [Attr.MESSAGING_SYSTEM]: 'bullmq',
            [Attr.MESSAGING_DESTINATION]: QueueName.RUNS,
            [Attr.MESSAGING_OPERATION_TYPE]: 'send',
            [Attr.MESSAGING_MESSAGE_ID]: jobId,
            [Attr.RUN_ID]: runId,
            [Attr.DIRECTIVE_ID]: source.directive,
            [Attr.RUN_TRIGGER]: trigger,
          },
        },
        trace,
      )
    );
  }
}

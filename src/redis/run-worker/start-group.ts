/**
 * Runs started together: one job of the runs queue holds a group of starts (made in one turn of
 * a client's event loop, see `start-sender.ts`), and the worker that takes it up starts and drives
 * every run of it at once, as it would drive each in a job of its own (each run holding one of the
 * worker's run slots, see `run-worker.ts`). So a burst of short runs costs a few jobs instead of
 * one each.
 *
 * A run ends or waits for a signal inside the group, and the group's job completes with those
 * records; one that rests while others of its group go on for a while is told sooner, as the
 * job's progress (see {@link EARLY_END_MS}). A run that parks, whose worker closes, or that fails
 * here for good (it cannot begin on this worker, say) goes on in a job of its own (`go-alone.ts`),
 * whose id is the run's. A group taken up again (its worker died, or Redis went away) looks at each
 * run again: one that has a job of its own is left to it, one stored is claimed and resumed (or,
 * ended, answered from the store), one never stored starts.
 */
import { backToWait } from '../back-to-wait.js';
import { DelayedError, Job, type Queue, WaitingError } from 'bullmq';
import type { RedisClient } from '../redis-client.js';
import type { RunRecord } from '../../engine/run-record.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import type { Logger } from '../../telemetry/logger.js';
import { checkStartsJob } from './check-start-group.js';
import { comeBackLater, mayComeBack, transient } from './come-back-later.js';
import { goAlone } from './go-alone.js';
import {
  startOfMember,
  type OneRunJobData,
  type RunJob,
  type RunJobData,
  type StartMember,
} from '../run-job.js';
import { toJobError } from '../job-error.js';

/**
 * How long a run of a group that has ended (or waits) may go untold: if its group has not
 * completed by then, the job's progress tells those that wait for it (with every other run that
 * rested meanwhile), in one write. A group whose runs rest together costs no such write.
 */
export const EARLY_END_MS = 50;

/** How one run of a group came out. */
type Outcome =
  | { kind: 'rested'; record: RunRecord }
  /** Another job has it: its own (it went on alone), or one under way here. */
  | { kind: 'elsewhere' }
  /** This worker lost it (its lease lapsed): the group's job goes back to whoever takes it. */
  | { kind: 'lost' }
  /** Redis went away: the group comes back later. */
  | { kind: 'again'; error: unknown };

/**
 * Starts and drives the runs of the group `job` with `runOne` (the worker's way of doing one
 * run's job, see `run-worker.ts`); resolves with the records of the runs that ended or wait.
 */
export async function performStartGroup(
  job: RunJob,
  token: string | undefined,
  redelivered: boolean,
  runs: Queue<RunJobData>,
  redis: RedisClient,
  log: Logger,
  runOne: (data: OneRunJobData) => Promise<RunRecord>,
): Promise<RunRecord[]> {
  const group = job.data;
  if (group.kind !== 'starts') throw new TypeError(`job ${job.id} is not a group of starts`);
  try {
    checkStartsJob(group, job.id);
  } catch (err) {
    throw toJobError(err);
  }
  const early = new EarlyEnds(job);
  const one = async (member: StartMember): Promise<Outcome> => {
    const data = startOfMember(group, member);
    try {
      if (redelivered && (await Job.fromId(runs, member.runId)) !== undefined)
        return { kind: 'elsewhere' };
      const record = await runOne(data);
      early.add(record);
      return { kind: 'rested', record };
    } catch (err) {
      if (err instanceof DelayedError) return { kind: 'elsewhere' };
      if (err instanceof WaitingError) return { kind: 'lost' };
      if (transient(err)) return { kind: 'again', error: err };
      // It fails here for good (it cannot begin on this worker, say): alone, it fails as a start
      // job of its own does, where `status` and its waiters see why.
      log.warn(
        { run_id: member.runId, group: job.id, error_code: DirigentError.from(err).code },
        `run ${member.runId} goes on alone, out of group ${job.id}: ${String(err)}`,
      );
      return goAlone(runs, job, member.runId).then(
        (): Outcome => ({ kind: 'elsewhere' }),
        (error: unknown): Outcome => ({ kind: 'again', error }),
      );
    }
  };
  const outcomes = await Promise.all(group.runs.map(one));
  early.close();
  const again = outcomes.find((o) => o.kind === 'again');
  if (again !== undefined) {
    if (mayComeBack(job)) {
      log.warn(
        { group: job.id, err: String(again.error) },
        `group of starts ${job.id} comes back later: ${String(again.error)}`,
      );
      return comeBackLater(job, token);
    }
    throw toJobError(again.error);
  }
  if (outcomes.some((o) => o.kind === 'lost')) {
    await backToWait(job, token, runs, redis).catch((err: unknown) =>
      // The job stays active until its lock lapses, then comes back as stalled: later, not lost.
      log.warn(
        { group: job.id, err: String(err) },
        `group of starts ${job.id} could not be put back to wait: ${String(err)}`,
      ),
    );
    throw new WaitingError();
  }
  return outcomes.flatMap((o) => (o.kind === 'rested' ? [o.record] : []));
}

/** Tells the runs of a group that rest early, as the job's progress: `{ runs: RunRecord[] }`. */
class EarlyEnds {
  private rested: RunRecord[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly job: RunJob) {}

  add(record: RunRecord): void {
    this.rested.push(record);
    this.timer ??= setTimeout(() => this.tell(), EARLY_END_MS);
  }

  /** The group is over: its job's completion tells the rest. */
  close(): void {
    clearTimeout(this.timer);
  }

  private tell(): void {
    const runs = this.rested;
    this.rested = [];
    this.timer = undefined;
    void this.job.updateProgress({ runs }).catch(() => {
      /* Only sooner: a progress lost (Redis away) leaves the completion, and the waiters' polls. */
    });
  }
}

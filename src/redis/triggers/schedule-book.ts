/**
 * Schedules, as BullMQ job schedulers on the triggers queue: each tick adds one trigger job named
 * `schedule`, whose id the trigger worker takes as the run's idempotency key, so a tick starts one
 * run however many workers serve the deployment, and a job taken up again after a crash starts no
 * second one. While every worker is down, BullMQ keeps one job for the next tick: a missed tick
 * runs once when a worker is back, not once per tick missed.
 *
 * Two kinds share the queue: schedules added by hand (`dirigent schedule add`, any id) and those
 * declared in directives (`<schedule>`), whose ids start with `directive:`, which workers keep in
 * step with the project they serve (`sync`).
 */
import { quiet } from '../redis-connection.js';
import { Queue } from 'bullmq';
import type { RedisClient } from '../redis-client.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { QueueName } from '../queue-names.js';
import { queueOptions } from '../queue-options.js';
import { DECLARED, type Schedule, type ScheduleStore } from '../../operations/schedule.js';
import type { TriggerJobData } from './trigger-job-data.js';

/** Finished trigger jobs kept for inspection. */
const KEEP = {
  removeOnComplete: { age: 86_400, count: 1000 },
  removeOnFail: { age: 7 * 86_400, count: 1000 },
};

/** See the module comment. */
export class ScheduleBook implements ScheduleStore {
  private readonly queue: Queue<TriggerJobData>;

  constructor(redis: RedisClient, prefix: string) {
    this.queue = quiet(new Queue<TriggerJobData>(QueueName.TRIGGERS, queueOptions(redis, prefix)));
  }

  /** Adds or replaces a schedule. */
  async put(s: Omit<Schedule, 'next'>): Promise<void> {
    await this.queue.upsertJobScheduler(
      s.id,
      { pattern: s.cron, ...(s.timezone !== undefined && { tz: s.timezone }) },
      { name: 'schedule', data: { directive: s.directive, inputs: s.inputs }, opts: KEEP },
    );
  }

  /** Every schedule, by id. */
  async list(): Promise<Schedule[]> {
    const all = await this.queue.getJobSchedulers(0, -1, true);
    return all
      .map((j) => ({
        id: j.key,
        directive: j.template?.data?.directive ?? '',
        cron: j.pattern ?? '',
        ...(j.tz !== undefined && j.tz !== null && { timezone: j.tz }),
        inputs: j.template?.data?.inputs ?? {},
        ...(j.next !== undefined && { next: j.next }),
      }))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  /** Removes a schedule; `UNKNOWN_SCHEDULE` when there is none with that id. */
  async remove(id: string): Promise<void> {
    if (await this.queue.removeJobScheduler(id)) return;
    throw DirigentError.fatal(ErrorCode.UNKNOWN_SCHEDULE, `No schedule with id "${id}".`, {
      hint: 'List schedules with `dirigent schedule list`.',
    });
  }

  /**
   * Makes the declared schedules (ids starting with `directive:`) exactly `declared`: adds and
   * updates those, removes the others. Schedules added by hand are left alone.
   */
  async sync(declared: Omit<Schedule, 'next'>[]): Promise<{ kept: number; removed: string[] }> {
    const keep = new Set(declared.map((s) => s.id));
    for (const s of declared) await this.put(s);
    const removed: string[] = [];
    for (const s of await this.list())
      if (s.id.startsWith(DECLARED) && !keep.has(s.id)) {
        await this.queue.removeJobScheduler(s.id);
        removed.push(s.id);
      }
    return { kept: declared.length, removed };
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

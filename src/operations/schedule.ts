/** A schedule (a run of a directive per cron tick) and where a deployment keeps them. */

/** A schedule: a run of `directive` with `inputs` per tick of `cron`. */
export interface Schedule {
  id: string;
  directive: string;
  cron: string;
  /** IANA time zone; UTC when absent. */
  timezone?: string;
  inputs: Record<string, unknown>;
  /** When it fires next (epoch ms), when known. */
  next?: number;
}

/** The prefix of the ids of schedules declared in directives. */
export const DECLARED = 'directive:';

/** Where a deployment keeps its schedules (`ScheduleBook` on Redis). */
export interface ScheduleStore {
  /** Adds or replaces a schedule. */
  put(schedule: Omit<Schedule, 'next'>): Promise<void>;
  /** Every schedule, by id. */
  list(): Promise<Schedule[]>;
  /** Removes a schedule; `UNKNOWN_SCHEDULE` when there is none with that id. */
  remove(id: string): Promise<void>;
  /** Makes the declared schedules exactly `declared`; schedules added by hand are left alone. */
  sync(declared: Omit<Schedule, 'next'>[]): Promise<{ kept: number; removed: string[] }>;
  close(): Promise<void>;
}

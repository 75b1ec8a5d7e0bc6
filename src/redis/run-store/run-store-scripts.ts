/**
 * The commands of {@link RedisRunStore}: every write of a run is one of its Lua scripts
 * (`run-store-lua.ts`), run through ioredis `defineCommand` (EVALSHA).
 */
import type { IndexOf } from './list-stored-runs.js';
import type { RedisClient } from '../redis-client.js';
import type { RunRecord, RunStatus } from '../../engine/run-record.js';
import type { RunEvents } from './pending-events.js';
import { BODY_LINES } from './run-hash.js';
import {
  CLAIM_SCRIPT,
  FORGET_SCRIPT,
  PRUNE_SCRIPT,
  READ_SCRIPT,
  READ_FEED_SCRIPT,
  RELEASE_SCRIPT,
  SAVE_SCRIPT,
} from './run-store-lua.js';

/** Arguments of a store command: its keys, then its arguments. */
export type Args = (string | number)[];

/** The store's scripts, once {@link defineRunStoreCommands} has defined them on a connection. */
export interface RunStoreCommands {
  dirigentSaveRun(...args: Args): Promise<[string, number, string?]>;
  dirigentForgetRun(...args: Args): Promise<number>;
  dirigentPruneRuns(...args: Args): Promise<number>;
  dirigentClaimRun(...args: Args): Promise<string[]>;
  dirigentReleaseRun(...args: Args): Promise<number>;
  dirigentReadRun(...args: Args): Promise<string[]>;
  dirigentReadFeed(...args: Args): Promise<[string, number, ...string[]]>;
}

/** Defines the run store's scripts on `redis` (idempotent) and returns it typed with them. */
export function defineRunStoreCommands(redis: RedisClient): RedisClient & RunStoreCommands {
  const r = redis as RedisClient & Partial<RunStoreCommands>;
  if (r.dirigentReadRun === undefined) {
    // Its first argument is the number of its keys: a run's parents' feeds are keys too.
    redis.defineCommand('dirigentSaveRun', { lua: SAVE_SCRIPT });
    redis.defineCommand('dirigentForgetRun', { numberOfKeys: 1, lua: FORGET_SCRIPT });
    redis.defineCommand('dirigentPruneRuns', { numberOfKeys: 1, lua: PRUNE_SCRIPT });
    redis.defineCommand('dirigentClaimRun', { numberOfKeys: 2, lua: CLAIM_SCRIPT });
    redis.defineCommand('dirigentReleaseRun', { numberOfKeys: 1, lua: RELEASE_SCRIPT });
    redis.defineCommand('dirigentReadRun', { numberOfKeys: 1, lua: READ_SCRIPT });
    redis.defineCommand('dirigentReadFeed', { numberOfKeys: 2, lua: READ_FEED_SCRIPT });
  }
  return redis as RedisClient & RunStoreCommands;
}

/** How a save writes (see the save script). */
export type SaveMode = 'full' | 'diff' | 'steps';

/**
 * The number of keys, the keys and the arguments of one save of a run, in the order the save
 * script reads them.
 */
export function saveRunArgs(
  store: {
    prefix: string;
    retentionSeconds: number;
    runKey(runId: string): string;
    feedKey(runId: string): string;
    indexKey(by: IndexOf): string;
  },
  mode: SaveMode,
  record: Pick<RunRecord, 'runId' | 'status' | 'directive' | 'startedAt'>,
  write: {
    expectVersion: number | undefined;
    baseEtag: string;
    etag: string;
    fence: string;
    owner: string;
    /**
     * The content hash of the directive's text, when this write sets the run's meta, with the
     * text unless the store sent it before.
     */
    text: { hash: string; text: string | undefined } | undefined;
    removed: string[];
    /** The hash fields and body lines (by their names in `BODY_LINES`) to write. */
    set: Map<string, string>;
    /** Feed events to append (see `pending-events.ts`). */
    events?: RunEvents | undefined;
    /**
     * Seconds an ended run is kept: its own retention (see `engine/run-retention.ts`); default
     * the store's. `Infinity` keeps it.
     */
    retentionSeconds?: number;
  },
): Args {
  const seconds = write.retentionSeconds ?? store.retentionSeconds;
  const retention = Number.isFinite(seconds) ? Math.max(1, Math.ceil(seconds)) : 0;
  const parents = write.events?.parents ?? [];
  const args: Args = [
    11 + 2 * parents.length,
    store.runKey(record.runId),
    `${store.prefix}:runs`,
    ...RUN_STATUSES.map((status) => store.indexKey({ status })),
    store.indexKey({ directive: record.directive }),
    `${store.prefix}:runs:expiring`,
    `${store.prefix}:runs:directive-of`,
    store.feedKey(record.runId),
    ...parents.flatMap((id) => [store.runKey(id), store.feedKey(id)]),
    store.prefix,
    mode,
    write.expectVersion === undefined ? '' : write.expectVersion,
    write.baseEtag,
    write.etag,
    record.runId,
    record.status,
    record.directive,
    record.startedAt,
    retention,
    write.fence,
    write.owner,
    write.text?.hash ?? '',
    write.text === undefined || write.text.text === undefined ? '' : `=${write.text.text}`,
    write.removed.length,
    ...write.removed,
    write.events?.events.length ?? 0,
    ...(write.events?.events ?? []),
  ];
  const lines: Args = [];
  const fields: Args = [];
  for (const [field, json] of write.set) {
    const line = (BODY_LINES as readonly string[]).indexOf(field);
    if (line < 0) fields.push(field, json);
    else lines.push(line + 1, json);
  }
  args.push(lines.length / 2, ...lines, ...fields);
  return args;
}

/** The statuses of runs, in the order the save script's keys list their indexes. */
export const RUN_STATUSES: readonly RunStatus[] = [
  'running',
  'waiting',
  'completed',
  'failed',
  'cancelled',
];

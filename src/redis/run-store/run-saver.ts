/**
 * Sending one save of a run to the save script (see `run-store-lua.ts`). A write that sets the
 * run's meta also keeps the directive's text once, at its text key (see `run-hash.ts`): the text
 * goes along unless this store sent it before, and if it is no longer kept (every run of it was
 * deleted or expired since), the script asks for it and the save is sent again with it.
 *
 * A save that records a step's or the run's end waits, if the store is told to, for replicas to
 * hold it (see `replica-wait.ts`).
 *
 * A save of an ended run carries the run's own retention (its directive's, else its project's,
 * else the store's: see `engine/run-retention.ts`), and arms the store's sweeper for when the run
 * expires (see `expiry-sweeper.ts`).
 */
import type { IndexOf } from './list-stored-runs.js';
import { hasEnded, type RunRecord } from '../../engine/run-record.js';
import type { StoredRun } from '../../engine/run-store.js';
import { runRetentionSeconds } from '../../engine/run-retention.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import type { RunEvents } from './pending-events.js';
import { sourceHash } from './run-hash.js';
import { ExpirySweeper } from './expiry-sweeper.js';
import { recordsAnEnd, ReplicaWaiter, type ReplicaWait } from './replica-wait.js';
import {
  saveRunArgs,
  type Args,
  type RunStoreCommands,
  type SaveMode,
} from './run-store-scripts.js';

/**
 * What a save sends of a run: its record's identity, its source when its meta is written, and its
 * project's folder (with the source, where an ended run's retention is read from).
 */
export interface SavedRun {
  record: Pick<RunRecord, 'runId' | 'status' | 'directive' | 'startedAt'>;
  source?: StoredRun['source'];
  projectDir?: string;
}

/** The store a save goes to. */
interface SaveStore {
  redis: RunStoreCommands & { wait(replicas: number, timeoutMs: number): Promise<number> };
  prefix: string;
  /** The retention of an ended run that sets none (its directive and project say nothing). */
  retentionSeconds: number;
  runKey(runId: string): string;
  feedKey(runId: string): string;
  indexKey(by: IndexOf): string;
  /** Prunes what has expired (the sweeper's work); a store that never ends a run needs none. */
  prune?(): Promise<number>;
}

/** How a save writes: on what it builds (a diff: the etag of that write, else ''), and the fields. */
export interface SaveWrite {
  baseEtag: string;
  etag: string;
  removed: string[];
  set: Map<string, string>;
  /** Feed events that go with the write (see `pending-events.ts`). */
  events?: RunEvents | undefined;
}

/** Sends a store's saves (see the module comment). */
export class RunSaver {
  /** The content hashes of the texts sent, forgotten all at once at 1,000. */
  private readonly sent = new Set<string>();
  /** Made by the first ended run this saver saves. */
  private sweeper: ExpirySweeper | undefined;
  /** Waits for replicas after a save that records an end, when the store is told to. */
  private readonly replicas: ReplicaWaiter | undefined;

  /** `fenceOf`: the fence a write of a run carries; `owner`: the lease name writing. */
  constructor(
    private readonly store: SaveStore,
    private readonly fenceOf: (runId: string) => string,
    private readonly owner: string,
    replicaWait?: ReplicaWait,
  ) {
    this.replicas = replicaWait && new ReplicaWaiter(replicaWait, store.redis);
  }

  /** Sends one save of `run` and resolves with the script's answer. */
  async send(
    mode: SaveMode,
    run: SavedRun,
    expectVersion: number | undefined,
    write: SaveWrite,
  ): Promise<[string, number, string?]> {
    const hash = run.source && write.set.has('meta') ? sourceHash(run.source) : '';
    const retentionSeconds = this.retentionOf(run);
    const send = (text: string | undefined) => {
      const args: Args = saveRunArgs(this.store, mode, run.record, {
        ...write,
        expectVersion,
        fence: this.fenceOf(run.record.runId),
        owner: this.owner,
        text: hash === '' ? undefined : { hash, text },
        ...(retentionSeconds !== undefined && { retentionSeconds }),
      });
      return this.store.redis.dirigentSaveRun(...args);
    };
    let reply = await send(this.sent.has(hash) ? undefined : run.source?.text);
    if (reply[0] === 'needtext') reply = await send(run.source!.text);
    // Sent with its text, a save never asks for it: one that does was not written.
    if (reply[0] === 'needtext')
      throw DirigentError.fatal(
        ErrorCode.INTERNAL,
        `Run ${run.record.runId} was not saved: the store asked for its directive's text, which was sent.`,
        {
          hint: 'Report this: the save script and this store disagree (are all processes the same version?).',
        },
      );
    if (hash !== '' && reply[0] === 'ok') {
      if (this.sent.size >= 1000) this.sent.clear();
      this.sent.add(hash);
    }
    if (retentionSeconds !== undefined && Number.isFinite(retentionSeconds) && reply[0] === 'ok')
      this.sweeperOf()?.expires(Date.now() + retentionSeconds * 1000);
    if (this.replicas && reply[0] === 'ok' && recordsAnEnd(mode, write.events?.events))
      await this.replicas.after(run.record.runId);
    return reply;
  }

  /** The seconds an ended run is kept (see the module comment); undefined for one under way. */
  private retentionOf(run: SavedRun): number | undefined {
    if (!hasEnded(run.record.status)) return undefined;
    const fallback = this.store.retentionSeconds;
    if (run.source === undefined || run.projectDir === undefined) return fallback;
    return runRetentionSeconds({ source: run.source, projectDir: run.projectDir }, fallback);
  }

  private sweeperOf(): ExpirySweeper | undefined {
    const { store } = this;
    if (store.prune === undefined) return undefined;
    const redis = store.redis as RunStoreCommands & Partial<SweptConnection>;
    this.sweeper ??= new ExpirySweeper({
      prune: () => store.prune!(),
      nextExpiry: async () => {
        const first = await redis.zrange?.(`${store.prefix}:runs:expiring`, 0, 0, 'WITHSCORES');
        return first?.[1] === undefined ? undefined : Number(first[1]);
      },
      isOpen: () => redis.status !== 'end',
    });
    return this.sweeper;
  }
}

/** What the sweeper reads of the store's connection (an ioredis `Redis`). */
interface SweptConnection {
  status: string;
  zrange(key: string, start: number, stop: number, withScores: 'WITHSCORES'): Promise<string[]>;
}

/**
 * The fallback of a feed: a run's stored record, read every `intervalMs`, pushed as `run.state`
 * whenever it changed (its status, or the steps it has ended). For a run whose feed this process
 * cannot read: an embedded run another process resumed from `.dirigent/runs/`. A step that starts
 * and ends between two reads is told only by the next `run.state`.
 */
import type { RunRecord } from '../engine/run-record.js';
import type { RunFeed } from './run-feed.js';

/**
 * Pushes the record `load` reads into `feed` as `run.state` each time it changed since `from`,
 * until the feed ends. `skip` says when not to look (the run is live here: its feed tells it).
 */
export function pollRecord(
  feed: RunFeed,
  load: () => Promise<RunRecord | undefined>,
  from: RunRecord,
  options: { intervalMs?: number; skip?: () => boolean } = {},
): void {
  const { intervalMs = 1000, skip } = options;
  let seen = markOf(from);
  let polls = 0;
  let timer: NodeJS.Timeout | undefined;
  const look = async () => {
    if (skip?.() !== true) {
      const record = await load().catch(() => {
        /* A failed read tells nothing: the next one finds what changed meanwhile. */
        return undefined;
      });
      if (record !== undefined && markOf(record) !== seen) {
        seen = markOf(record);
        feed.push({
          type: 'run.state',
          id: `poll-${++polls}`,
          runId: record.runId,
          at: Date.now(),
          record,
        });
      }
    }
    if (!feed.isDone) timer = setTimeout(() => void look(), intervalMs);
  };
  timer = setTimeout(() => void look(), intervalMs);
  feed.onClose(() => clearTimeout(timer));
}

/** What tells one stored state of a run from another. */
function markOf(record: RunRecord): string {
  return `${record.status}:${record.steps.length}:${record.waiting?.length ?? 0}`;
}

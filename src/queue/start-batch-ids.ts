/**
 * Ids of runs started together in one job (see `start-batch.ts`). A batch draws one random UUID,
 * its key: run `i` of it is the key with its last four hex digits replaced by `i`, and the batch's
 * job id is the key's first 32 characters after `starts.` (no run id holds a `.`). So a run id
 * names the one job that may hold it while it is queued, and `status` finds a queued run of a
 * batch with one read more, and no index to keep.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The largest batch the scheme can name. */
export const MAX_BATCH_RUNS = 0x10000;

/** The run ids of a batch of `count` runs drawn from `key` (a random UUID). */
export function batchRunIds(key: string, count: number): string[] {
  if (!UUID.test(key)) throw new RangeError(`batch key ${key} is not a lower-case UUID`);
  if (count < 1 || count > MAX_BATCH_RUNS) throw new RangeError(`batch of ${count} runs`);
  const stem = key.slice(0, 32);
  return Array.from({ length: count }, (_, i) => stem + i.toString(16).padStart(4, '0'));
}

/** The job id of the batch drawn from `key`. */
export function batchJobId(key: string): string {
  return `starts.${key.slice(0, 32)}`;
}

/** The job id of the batch that may hold `runId`; undefined for a run id no batch can have. */
export function batchJobIdOf(runId: string): string | undefined {
  return UUID.test(runId) ? batchJobId(runId) : undefined;
}

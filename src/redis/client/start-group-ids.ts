/**
 * Ids of runs started together in one job (see `start-group.ts`). A group draws one random UUID,
 * its key: run `i` of it is the key with its first four hex digits replaced by a number only `i`
 * gives (see {@link leadOf}), and the group's job id is the key's last 32 characters after
 * `starts.` (no run id holds a `.`). So ids of runs started together differ in their first
 * characters, where the console and every log line show an id; a run id names the one job that
 * may hold it while it is queued, and `status` finds a queued run of a group with one read more,
 * and no index to keep.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The largest group the scheme can name. */
export const MAX_GROUP_RUNS = 0x10000;

/** The run ids of a group of `count` runs drawn from `key` (a random UUID). */
export function groupRunIds(key: string, count: number): string[] {
  if (!UUID.test(key)) throw new RangeError(`group key ${key} is not a lower-case UUID`);
  if (count < 1 || count > MAX_GROUP_RUNS) throw new RangeError(`group of ${count} runs`);
  const lead = parseInt(key.slice(0, 4), 16);
  const rest = key.slice(4);
  return Array.from({ length: count }, (_, i) => leadOf(i, lead) + rest);
}

/**
 * An odd multiplier: `i ↦ i · SPREAD mod 2¹⁶` is one-to-one, so the leads of a group are all
 * distinct, and consecutive `i` differ in every digit rather than only the last.
 */
const SPREAD = 0x9e37;

/** The first four hex digits of run `i` of a group whose key begins with `lead`. */
function leadOf(i: number, lead: number): string {
  return ((Math.imul(i, SPREAD) ^ lead) & 0xffff).toString(16).padStart(4, '0');
}

/** The job id of the group drawn from `key`. */
export function groupJobId(key: string): string {
  return `starts.${key.slice(4)}`;
}

/** The job id of the group that may hold `runId`; undefined for a run id no group can have. */
export function groupJobIdOf(runId: string): string | undefined {
  return UUID.test(runId) ? groupJobId(runId) : undefined;
}

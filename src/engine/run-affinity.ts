/**
 * A run's affinity: a 32-bit number that every run of one family shares, so that a deployment
 * spread over shards keeps a family on one shard (its shard is the affinity modulo the number of
 * shards, see `redis/shards/shard-layout.ts`). A UUID-shaped id's affinity is its last eight hex
 * digits, which runs started together in one job share (`start-group-ids.ts`) and a child's id is
 * given from its parent's (`child-run-id.ts`); any other id's is a hash of it.
 */

const UUID_TAIL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}([0-9a-f]{8})$/;

/** The run's affinity (see the module comment), from 0 to 2³² − 1. */
export function runAffinity(runId: string): number {
  const tail = UUID_TAIL.exec(runId)?.[1];
  if (tail !== undefined) return parseInt(tail, 16);
  // FNV-1a, 32 bits: stable across processes and versions.
  let h = 0x811c9dc5;
  for (let i = 0; i < runId.length; i++) {
    h ^= runId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** `affinity` as the eight hex digits that end a UUID-shaped id having it. */
export function affinityDigits(affinity: number): string {
  return (affinity >>> 0).toString(16).padStart(8, '0');
}

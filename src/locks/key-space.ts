/**
 * Where the keys of locks and rate limits live: under a key prefix (`<prefix>:lock:<key>`), or
 * wherever a deployment's layout puts its global keys (`redis/shards/shard-layout.ts`).
 */

/** Names the Redis key of a global thing of `kind` (`lock`, `rate`, …) called `name`. */
export interface GlobalKeys {
  globalKey(kind: string, name: string): string;
}

/** A key prefix, or a deployment's layout. */
export type KeySpace = string | GlobalKeys;

/**
 * The connection every part of the distributed engine talks through: one Redis (a standalone
 * server, or the primary a Sentinel deployment names) or a Redis Cluster. Both answer the same
 * commands; on a cluster, each script and each transaction touches keys of one hash slot (see
 * `shards/shard-layout.ts`).
 */
import type { Cluster, Redis } from 'ioredis';

/** A connection to one Redis or to a Redis Cluster (see the module comment). */
export type RedisClient = Redis | Cluster;

/**
 * The forms a deployment's Redis is named in (`--redis`, `REDIS_URL`, `Dirigent.open({ redis })`):
 *
 * - `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS): one Redis, as ioredis
 *   takes it;
 * - `redis+sentinel://[user:password@]host:port,host:port[,…]/<master name>[/db]` (or
 *   `rediss+sentinel://`): a Sentinel deployment, reached through any of its sentinels, which tell
 *   where the primary is now; `?sentinelPassword=…` (and `sentinelUsername`) when the sentinels
 *   have a password of their own;
 * - `redis+cluster://[user:password@]host:port,host:port[,…]` (or `rediss+cluster://`): a Redis
 *   Cluster, reached through any of its nodes.
 *
 * A form that is none of these is `INVALID_CONFIG`, naming the accepted forms.
 */
import type { RedisOptions } from 'ioredis';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/** A host and a port. */
export interface RedisNode {
  host: string;
  port: number;
}

/** What a Redis URL names. */
export type RedisEndpoint =
  | { kind: 'single'; url: string }
  | {
      kind: 'sentinel';
      sentinels: RedisNode[];
      /** The master name the sentinels watch. */
      name: string;
      /** The primary's credentials, database and TLS, and the sentinels' own credentials. */
      options: RedisOptions;
    }
  | { kind: 'cluster'; nodes: RedisNode[]; options: RedisOptions };

/** The accepted forms, for messages. */
export const REDIS_URL_FORMS = [
  'redis://[user:password@]host:port[/db] (rediss:// for TLS)',
  'redis+sentinel://[user:password@]host:port,host:port/<master name>[/db]',
  'redis+cluster://[user:password@]host:port,host:port',
] as const;

const MULTI =
  /^(rediss?)\+(sentinel|cluster):\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/?#]+)(?:\/([^/?#]*))?(?:\/([^/?#]*))?(?:\?([^#]*))?$/;

/**
 * What `url` names (see the module comment); `INVALID_CONFIG` for a malformed one. A text without
 * a scheme is left to ioredis, which takes `host:port` and a Unix socket's path.
 */
export function parseRedisUrl(url: string): RedisEndpoint {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined) return { kind: 'single', url };
  if (scheme === 'redis' || scheme === 'rediss') {
    try {
      new URL(url);
    } catch {
      throw malformed(url, 'it is not a URL');
    }
    return { kind: 'single', url };
  }
  const m = MULTI.exec(url);
  if (m === null)
    throw malformed(
      url,
      /^rediss?\+(sentinel|cluster)$/.test(scheme)
        ? 'its hosts or path do not read as the form says'
        : `"${scheme}://" is not a scheme of Redis`,
    );
  const [, base, kind, user, password, hosts, first, second, query] = m;
  const nodes = hosts!.split(',').map((h) => nodeOf(url, h));
  const params = new URLSearchParams(query ?? '');
  const options: RedisOptions = {
    ...(user && { username: decodeURIComponent(user) }),
    ...(password !== undefined && password !== '' && { password: decodeURIComponent(password) }),
    ...(base === 'rediss' && { tls: {} }),
  };
  if (kind === 'cluster') {
    if (first !== undefined && first !== '')
      throw malformed(url, 'a cluster has no database number or name: give its nodes only');
    return { kind: 'cluster', nodes, options };
  }
  if (first === undefined || first === '')
    throw malformed(
      url,
      'a sentinel URL ends with the master name the sentinels watch (/mymaster)',
    );
  const db = second === undefined || second === '' ? undefined : Number(second);
  if (db !== undefined && !(Number.isInteger(db) && db >= 0))
    throw malformed(url, `the database "${second}" is not a number`);
  const sentinelUsername = params.get('sentinelUsername');
  const sentinelPassword = params.get('sentinelPassword');
  return {
    kind: 'sentinel',
    sentinels: nodes,
    name: decodeURIComponent(first),
    options: {
      ...options,
      ...(db !== undefined && { db }),
      ...(sentinelUsername !== null && { sentinelUsername }),
      ...(sentinelPassword !== null && { sentinelPassword }),
      ...(base === 'rediss' && { enableTLSForSentinelMode: true }),
    },
  };
}

function nodeOf(url: string, text: string): RedisNode {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+):(\d{1,5})$/i.exec(text.trim());
  const port = Number(m?.[2]);
  if (m === null || port < 1 || port > 65535) throw malformed(url, `"${text}" is not host:port`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

function malformed(url: string, why: string): DirigentError {
  const shown = url.replace(/\/\/[^@/]*@/, '//***@');
  return DirigentError.fatal(
    ErrorCode.INVALID_CONFIG,
    `The Redis URL ${shown} is malformed: ${why}.`,
    {
      hint: `Name Redis in one of these forms (--redis or REDIS_URL): ${REDIS_URL_FORMS.join('; ')}.`,
      details: { forms: REDIS_URL_FORMS },
    },
  );
}

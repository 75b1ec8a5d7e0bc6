/** The forms a deployment's Redis is named in, and the located refusal of a malformed one. */
import { describe, expect, it } from 'vitest';
import { parseRedisUrl } from '../../../src/redis/redis-endpoint.js';

describe('a Redis URL', () => {
  it('names one Redis as ioredis takes it, and leaves a text without a scheme to ioredis', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379/2')).toEqual({
      kind: 'single',
      url: 'redis://127.0.0.1:6379/2',
    });
    expect(parseRedisUrl('rediss://u:p@h:6380').kind).toBe('single');
    expect(parseRedisUrl('127.0.0.1:6379')).toEqual({ kind: 'single', url: '127.0.0.1:6379' });
  });

  it('names a Sentinel deployment by its sentinels and master name, with credentials and a database', () => {
    expect(
      parseRedisUrl(
        'redis+sentinel://ops:s%40cret@10.0.0.1:26379,[::1]:26380/mymaster/3?sentinelPassword=x',
      ),
    ).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      name: 'mymaster',
      options: { username: 'ops', password: 's@cret', db: 3, sentinelPassword: 'x' },
    });
    expect(parseRedisUrl('rediss+sentinel://h:1/m')).toMatchObject({
      options: { tls: {}, enableTLSForSentinelMode: true },
    });
  });

  it('names a Redis Cluster by any of its nodes', () => {
    expect(parseRedisUrl('redis+cluster://a:7000,b:7001')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
      ],
      options: {},
    });
  });

  it.each([
    ['http://127.0.0.1:6379', /"http:\/\/" is not a scheme of Redis/],
    ['redis+sentinel://h:26379', /ends with the master name/],
    ['redis+sentinel://h/mymaster', /"h" is not host:port/],
    ['redis+sentinel://h:99999/m', /"h:99999" is not host:port/],
    ['redis+sentinel://h:1/m/x', /database "x" is not a number/],
    ['redis+cluster://a:7000/0', /a cluster has no database number/],
    ['redis+nope://a:1', /"redis\+nope:\/\/" is not a scheme/],
  ])('refuses %s with INVALID_CONFIG and the accepted forms', (url, why) => {
    let error: unknown;
    try {
      parseRedisUrl(url);
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(why) });
    expect((error as { hint: string }).hint).toMatch(/redis\+sentinel:\/\//);
  });

  it('does not print a password it refuses', () => {
    expect(() => parseRedisUrl('redis+sentinel://u:hunter2@h:1')).toThrow(/\/\/\*\*\*@h:1/);
  });
});

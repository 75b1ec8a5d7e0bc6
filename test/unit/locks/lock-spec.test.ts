import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/errors/index.js';
import {
  DEFAULT_LEASE_MS,
  parseConcurrencySpec,
  parseRateLimitSpec,
} from '../../../src/locks/index.js';
import { thrown } from '../../support/thrown.js';

const source = { subject: 'tool dirigent/git/push' };

describe('parseConcurrencySpec', () => {
  it('reads a full declaration', () => {
    expect(
      parseConcurrencySpec({ key: 'repo:${inputs.repo}', limit: 2, lease_ms: 10_000 }, source),
    ).toEqual({ key: 'repo:${inputs.repo}', limit: 2, leaseMs: 10_000 });
  });

  it('defaults the lease to 30 s', () => {
    expect(parseConcurrencySpec({ key: 'k', limit: 1 }, source)).toEqual({
      key: 'k',
      limit: 1,
      leaseMs: DEFAULT_LEASE_MS,
    });
    expect(DEFAULT_LEASE_MS).toBe(30_000);
  });

  it('is undefined when nothing is declared', () => {
    expect(parseConcurrencySpec(undefined, source)).toBeUndefined();
    expect(parseConcurrencySpec(null, source)).toBeUndefined();
  });

  it.each([
    ['a string', 'repo', 'concurrency', 'must be an object with `key`, `limit`, `lease_ms`'],
    ['a list', [1], 'concurrency', 'must be an object'],
    ['no key', { limit: 2 }, 'concurrency.key', 'is required: a non-empty string'],
    ['an empty key', { key: '  ', limit: 2 }, 'concurrency.key', 'non-empty string'],
    ['a number key', { key: 7, limit: 2 }, 'concurrency.key', 'not 7'],
    ['no limit', { key: 'k' }, 'concurrency.limit', 'is required: an integer of at least 1'],
    [
      'a zero limit',
      { key: 'k', limit: 0 },
      'concurrency.limit',
      'must be an integer of at least 1, not 0',
    ],
    ['a fractional limit', { key: 'k', limit: 1.5 }, 'concurrency.limit', 'not 1.5'],
    ['a string limit', { key: 'k', limit: '2' }, 'concurrency.limit', 'not "2"'],
    [
      'a short lease',
      { key: 'k', limit: 1, lease_ms: 10 },
      'concurrency.lease_ms',
      'at least 1000, not 10',
    ],
  ])('refuses %s, naming the field', (_, value, path, expected) => {
    const err = thrown(() => parseConcurrencySpec(value, source));
    expect(err.code).toBe(ErrorCode.INVALID_TOOL);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('tool dirigent/git/push: ');
    expect(err.message).toContain(`\`${path}\``);
    expect(err.message).toContain(expected);
    expect(err.details).toEqual({ path });
  });

  it('refuses an unknown field, suggesting the closest', () => {
    const err = thrown(() => parseConcurrencySpec({ key: 'k', limt: 2 }, source));
    expect(err.message).toBe(
      'tool dirigent/git/push: `concurrency.limt` is not a known field (did you mean `limit`?).',
    );
    expect(err.hint).toBe('concurrency may hold key, limit, lease_ms.');
  });

  it("raises the caller's code at the caller's location", () => {
    const location = { file: 'deploy.md', line: 12, column: 5 };
    const err = thrown(() =>
      parseConcurrencySpec(
        { key: 'k' },
        { subject: 'step "deploy"', code: 'INVALID_ATTRIBUTE', location },
      ),
    );
    expect(err.code).toBe('INVALID_ATTRIBUTE');
    expect(err.location).toEqual(location);
    expect(err.describe()).toMatch(/^deploy\.md:12:5: step "deploy": `concurrency\.limit`/);
  });
});

describe('parseRateLimitSpec', () => {
  it('reads a declaration', () => {
    expect(parseRateLimitSpec({ key: 'api:github', max: 10, duration_ms: 1000 }, source)).toEqual({
      key: 'api:github',
      max: 10,
      durationMs: 1000,
    });
    expect(parseRateLimitSpec(undefined, source)).toBeUndefined();
  });

  it.each([
    [
      'no max',
      { key: 'k', duration_ms: 1000 },
      'rate_limit.max',
      'is required: an integer from 1 to 100000',
    ],
    [
      'a huge max',
      { key: 'k', max: 1e6, duration_ms: 1000 },
      'rate_limit.max',
      'from 1 to 100000, not 1000000',
    ],
    [
      'no duration',
      { key: 'k', max: 1 },
      'rate_limit.duration_ms',
      'is required: an integer of at least 1',
    ],
    [
      'a negative duration',
      { key: 'k', max: 1, duration_ms: -5 },
      'rate_limit.duration_ms',
      'not -5',
    ],
    ['no key', { max: 1, duration_ms: 5 }, 'rate_limit.key', 'is required'],
  ])('refuses %s, naming the field', (_, value, path, expected) => {
    const err = thrown(() => parseRateLimitSpec(value, source));
    expect(err.code).toBe(ErrorCode.INVALID_TOOL);
    expect(err.message).toContain(`\`${path}\``);
    expect(err.message).toContain(expected);
  });

  it('refuses an unknown field', () => {
    const err = thrown(() =>
      parseRateLimitSpec({ key: 'k', max: 1, duration_ms: 5, per: 'second' }, source),
    );
    expect(err.message).toContain('`rate_limit.per` is not a known field');
    expect(err.hint).toBe('rate_limit may hold key, max, duration_ms.');
  });
});

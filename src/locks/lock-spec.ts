/**
 * The `concurrency` and `rate_limit` declarations of a tool or a step, read from plain data (YAML,
 * JSON, a JS tool's metadata literal) and checked field by field:
 *
 * ```yaml
 * concurrency: { key: 'repo:${inputs.repo}', limit: 2, lease_ms: 30000 }
 * rate_limit: { key: 'api:github', max: 10, duration_ms: 1000 }
 * ```
 *
 * The keys are templates: they are kept as written here and rendered by the caller for each job.
 */
import { closest } from '../errors/did-you-mean.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';

/** Lease of a concurrency slot when `lease_ms` is not declared: 30 s. */
export const DEFAULT_LEASE_MS = 30_000;
/** Shortest lease accepted: the lease is renewed every third of it, over a network. */
export const MIN_LEASE_MS = 1_000;
/** Largest `rate_limit.max`: the sliding window keeps one Redis entry per admitted call. */
export const MAX_RATE_MAX = 100_000;

/** At most `limit` jobs with the same rendered `key` run at once. */
export interface ConcurrencySpec {
  /** Template of the lock key (e.g. `repo:${inputs.repo}`), rendered by the caller. */
  key: string;
  /** How many jobs may hold the key at once; an integer of at least 1. */
  limit: number;
  /** How long a slot outlives a holder that stopped renewing it (a dead worker), in ms. */
  leaseMs: number;
}

/** At most `max` jobs with the same rendered `key` start in any window of `durationMs`. */
export interface RateLimitSpec {
  /** Template of the rate key (e.g. `api:github`), rendered by the caller. */
  key: string;
  /** How many starts each window admits; an integer of at least 1. */
  max: number;
  /** The length of the sliding window, in ms. */
  durationMs: number;
}

/** Who declared the spec, for the error messages. */
export interface LockSpecSource {
  /** What declares it, as a person reads it: `tool dirigent/git/push`, `step "deploy"`. */
  subject: string;
  /** The error code raised; default `INVALID_TOOL`. */
  code?: ErrorCode;
  /** Where the declaration is, when known. */
  location?: SourceLocation;
}

const CONCURRENCY_FIELDS = ['key', 'limit', 'lease_ms'];
const RATE_LIMIT_FIELDS = ['key', 'max', 'duration_ms'];

/**
 * Reads a `concurrency` declaration; `undefined` when there is none (`value` is undefined or
 * null). Throws a fatal {@link DirigentError} (default code `INVALID_TOOL`) naming the field and
 * what it accepts.
 */
export function parseConcurrencySpec(
  value: unknown,
  source: LockSpecSource,
): ConcurrencySpec | undefined {
  if (value === undefined || value === null) return undefined;
  const fields = new FieldReader('concurrency', value, CONCURRENCY_FIELDS, source);
  return {
    key: fields.key(),
    limit: fields.integer('limit', 1, undefined),
    leaseMs: fields.integer('lease_ms', MIN_LEASE_MS, DEFAULT_LEASE_MS),
  };
}

/**
 * Reads a `rate_limit` declaration; `undefined` when there is none (`value` is undefined or
 * null). Throws a fatal {@link DirigentError} (default code `INVALID_TOOL`) naming the field and
 * what it accepts.
 */
export function parseRateLimitSpec(
  value: unknown,
  source: LockSpecSource,
): RateLimitSpec | undefined {
  if (value === undefined || value === null) return undefined;
  const fields = new FieldReader('rate_limit', value, RATE_LIMIT_FIELDS, source);
  return {
    key: fields.key(),
    max: fields.integer('max', 1, undefined, MAX_RATE_MAX),
    durationMs: fields.integer('duration_ms', 1, undefined),
  };
}

/** Reads the fields of one declaration, throwing on the first wrong one. */
class FieldReader {
  private readonly obj: Record<string, unknown>;

  constructor(
    private readonly name: string,
    value: unknown,
    known: string[],
    private readonly source: LockSpecSource,
  ) {
    if (typeof value !== 'object' || Array.isArray(value) || value === null)
      throw this.error(
        name,
        `must be an object with ${known.map((k) => `\`${k}\``).join(', ')}`,
        value,
      );
    this.obj = value as Record<string, unknown>;
    for (const field of Object.keys(this.obj)) {
      if (known.includes(field)) continue;
      const guess = closest(field, known);
      throw this.fail(
        `${name}.${field}`,
        `\`${name}.${field}\` is not a known field${guess ? ` (did you mean \`${guess}\`?)` : ''}.`,
        `${name} may hold ${known.join(', ')}.`,
      );
    }
  }

  /** `key`: a non-empty string (a template). */
  key(): string {
    const key = this.obj.key;
    if (typeof key !== 'string' || key.trim() === '')
      throw this.error(
        `${this.name}.key`,
        "is required: a non-empty string, a template such as 'repo:${inputs.repo}'",
        key,
      );
    return key;
  }

  /** An integer field of at least `min` (and at most `max`); `fallback` when absent. */
  integer(field: string, min: number, fallback: number | undefined, max?: number): number {
    const path = `${this.name}.${field}`;
    const v = this.obj[field];
    if (v === undefined && fallback !== undefined) return fallback;
    const range = max === undefined ? `of at least ${min}` : `from ${min} to ${max}`;
    const expected =
      v === undefined ? `is required: an integer ${range}` : `must be an integer ${range}`;
    if (
      typeof v !== 'number' ||
      !Number.isSafeInteger(v) ||
      v < min ||
      (max !== undefined && v > max)
    )
      throw this.error(path, expected, v);
    return v;
  }

  private error(path: string, expected: string, got: unknown): DirigentError {
    const shown = got === undefined ? '' : `, not ${show(got)}`;
    return this.fail(path, `\`${path}\` ${expected}${shown}.`);
  }

  private fail(path: string, message: string, hint?: string): DirigentError {
    return DirigentError.fatal(
      this.source.code ?? ErrorCode.INVALID_TOOL,
      `${this.source.subject}: ${message}`,
      {
        ...(this.source.location !== undefined && { location: this.source.location }),
        ...(hint !== undefined && { hint }),
        details: { path },
      },
    );
  }
}

function show(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

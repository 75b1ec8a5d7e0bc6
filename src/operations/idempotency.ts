/**
 * Idempotency keys: the same key within its window starts one run, whoever asks and however
 * often, even when requests race. The run's id is derived from the key, so every racer names the
 * same run; a claim (Redis `SET NX`, or a file created exclusively) says which of them starts it.
 * A key used again for another directive or other inputs is `IDEMPOTENCY_CONFLICT`.
 */
import { createHash } from 'node:crypto';
import { didYouMean } from '../errors/did-you-mean.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/** How long a key holds its run (default 24 h). */
export const DEFAULT_IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

/** The outcome of a claim: the key's run, and whether this claim made it. */
export interface Claim {
  runId: string;
  /** True for the first claim of the key in its window: its maker starts the run. */
  created: boolean;
  /**
   * For a claim made before: whether its maker may still be starting the run (it is alive, or
   * claimed moments ago). When not, and the run does not exist, its maker died first: start it.
   */
  pending?: boolean;
}

/** Where claims are kept. */
export interface IdempotencyStore {
  /** Claims `key` for a run described by `fingerprint`, for `windowMs`. */
  claim(key: string, fingerprint: string, windowMs: number): Promise<Claim>;
  /** Whether `key` is claimed within a window of `windowMs`, without claiming it. */
  held(key: string, windowMs: number): Promise<boolean>;
}

/**
 * What a start under a key does when the key's run failed or was cancelled, as Temporal's id
 * reuse policy: `never` (the default) answers that run; `failed` starts a new run, which the key
 * then names.
 */
export type ReusePolicy = 'never' | 'failed';

/** The reuse policies, for messages and schemas. */
export const REUSE_POLICIES: readonly ReusePolicy[] = ['never', 'failed'];

/** Checks a reuse policy as a caller gives it: `INVALID_REQUEST` listing the policies. */
export function checkReusePolicy(reuse: unknown): ReusePolicy {
  if (REUSE_POLICIES.includes(reuse as ReusePolicy)) return reuse as ReusePolicy;
  throw DirigentError.fatal(
    ErrorCode.INVALID_REQUEST,
    `"${String(reuse)}" is not a reuse policy of an idempotency key.${didYouMean(String(reuse), REUSE_POLICIES)}`,
    {
      hint: 'Use "never" (a key answers its run, whatever its end) or "failed" (a key whose run failed or was cancelled starts a new run).',
    },
  );
}

/** A reuse policy given without an idempotency key, which it would apply to. */
export function reuseWithoutKey(): DirigentError {
  return DirigentError.fatal(
    ErrorCode.INVALID_REQUEST,
    'A reuse policy applies to an idempotency key, and this start has none.',
    {
      hint: 'Give the key too (idempotencyKey, the Idempotency-Key header, --idempotency-key), or leave reuse out.',
    },
  );
}

/**
 * The key under which the `generation`th run of `key` is claimed: the key itself for its first
 * run, so that runs started before reuse existed keep their ids.
 */
export function generationKey(key: string, generation: number): string {
  return generation === 0 ? key : `${key}\0${generation}`;
}

/** The id of the run a key stands for: a UUID made from the key (and the deployment's scope). */
export function runIdForKey(scope: string, key: string): string {
  const h = createHash('sha256').update(`${scope}\0${key}`).digest('hex');
  // Shaped as a version 4 UUID: its hex digits are the run's trace id, as for any run.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** What a run is, for comparing the requests that share a key: its directive and inputs. */
export function fingerprintOf(directive: string, inputs: Record<string, unknown>): string {
  return createHash('sha256')
    .update(`${directive}\0${canonical(inputs)}`)
    .digest('hex');
}

/** Checks a key as a caller gives it: 1 to 255 printable characters. */
export function checkIdempotencyKey(key: string): void {
  if (key.length >= 1 && key.length <= 255 && /^[\x21-\x7e]+$/.test(key)) return;
  throw DirigentError.fatal(
    ErrorCode.INVALID_REQUEST,
    `An idempotency key is 1 to 255 printable characters without spaces; got ${key.length} characters.`,
    { hint: 'Use a UUID, or an id of your own request (order-1234).' },
  );
}

/** JSON with object keys sorted, so equal inputs give equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** The same key was used for another directive or other inputs within its window. */
export function idempotencyConflict(key: string): DirigentError {
  return DirigentError.fatal(
    ErrorCode.IDEMPOTENCY_CONFLICT,
    `Idempotency key "${key}" was used for another directive or other inputs within its window.`,
    { hint: 'Use a new key for a different request; the same key repeats only the same one.' },
  );
}

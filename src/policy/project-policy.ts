/**
 * What a project allows its directives: which environment variables `{env:…}` may read, whether
 * shell text built from values is refused (strict mode), whether directives and tools must be
 * signed by a trusted key, how large what comes in may be, and how long ended runs are kept
 * (`retention`, see `docs/operating-retention.md`). Read from
 * `.ai/config/dirigent.yaml` and the environment (`DIRIGENT_STRICT`, `DIRIGENT_ENV_ALLOW`,
 * `DIRIGENT_REQUIRE_SIGNATURES`); see `docs/security.md`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as Yaml from 'yaml';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { lazyPackage } from '../lazy-package.js';
import { ALWAYS_ALLOWED_ENV } from './always-allowed-env.js';
import { DEFAULT_LIMITS, type InputLimits } from './input-limits.js';
import { DURATION_EXAMPLES, parseDuration } from './duration.js';

export { DEFAULT_LIMITS, type InputLimits } from './input-limits.js';

/** The YAML reader, loaded by the first YAML text read. */
const yaml = lazyPackage<typeof Yaml>('yaml');

/** A project's rules for its directives and their inputs. */
export interface ProjectPolicy {
  /** Refuse (rather than warn about) directives that build code from values they do not control. */
  strict: boolean;
  /** Environment variables `{env:…}` may read, besides the directive's declared secrets. */
  envAllow: ReadonlySet<string>;
  /**
   * Refuse unsigned items and items signed by keys the trust store does not hold (a signed item
   * whose content changed is refused either way): `require_signatures: true`, or
   * `DIRIGENT_REQUIRE_SIGNATURES=1|true` in the environment.
   */
  requireSignatures: boolean;
  limits: InputLimits;
  /**
   * How long runs are kept once ended, in seconds (`retention: 7d`); a directive's
   * `<retention days>` wins over it. Undefined: not set, the store's default
   * ({@link DEFAULT_RETENTION_SECONDS}, 7 days, unless a worker was given another).
   */
  retentionSeconds?: number;
  /**
   * The number of shards a Redis deployment of this project spreads its runs over (`shards: 16`,
   * see `redis/shards/shard-layout.ts`); `DIRIGENT_SHARDS` wins over it. Undefined: not set (1).
   */
  shards?: number;
}

/**
 * The most shards a deployment may have (`redis/shards/shard-layout.ts`): kept here, beside the
 * setting, so that reading a project's configuration loads nothing of Redis.
 */
export const MAX_SHARDS = 1024;

/** How long ended runs are kept when neither the project nor the directive says: 7 days. */
export const DEFAULT_RETENTION_SECONDS = 7 * 24 * 3600;

/** The longest retention a project may set (about 100 years, as a directive's at most). */
const MAX_RETENTION_SECONDS = 36_500 * 86_400;

/** The policy of a project without configuration: nothing beyond {@link ALWAYS_ALLOWED_ENV}. */
export const DEFAULT_POLICY: ProjectPolicy = Object.freeze({
  strict: false,
  envAllow: new Set(ALWAYS_ALLOWED_ENV),
  requireSignatures: false,
  limits: DEFAULT_LIMITS,
});

/** Where a project's configuration lives, relative to its root. */
export const POLICY_FILE = join('.ai', 'config', 'dirigent.yaml');

const LIMIT_KEYS: Record<string, keyof InputLimits> = {
  directive_bytes: 'directiveBytes',
  inputs_bytes: 'inputsBytes',
  payload_bytes: 'payloadBytes',
  result_bytes: 'resultBytes',
  json_depth: 'jsonDepth',
};
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The policy of the project at `projectDir`: its configuration file (if any), then the
 * environment, which can only add to it (`DIRIGENT_STRICT=1`, `DIRIGENT_ENV_ALLOW=A,B`,
 * `DIRIGENT_REQUIRE_SIGNATURES=1`). Throws `INVALID_CONFIG` with the file, line and a fix for a
 * malformed file.
 */
export function loadProjectPolicy(
  projectDir: string,
  env: Record<string, string | undefined> = process.env,
): ProjectPolicy {
  const file = join(projectDir, POLICY_FILE);
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    text = undefined;
  }
  const fromFile = text === undefined ? DEFAULT_POLICY : parsePolicy(text, file);
  const extra = (env.DIRIGENT_ENV_ALLOW ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const bad = extra.find((name) => !ENV_NAME.test(name));
  if (bad !== undefined) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_CONFIG,
      `DIRIGENT_ENV_ALLOW names "${bad}", which is not a variable name.`,
      { hint: 'List variable names separated by commas: DIRIGENT_ENV_ALLOW=REGION,STAGE.' },
    );
  }
  return {
    strict: fromFile.strict || /^(1|true)$/i.test(env.DIRIGENT_STRICT ?? ''),
    envAllow: new Set([...fromFile.envAllow, ...extra]),
    requireSignatures: fromFile.requireSignatures || signaturesRequiredByEnv(env),
    limits: fromFile.limits,
    ...(fromFile.retentionSeconds !== undefined && { retentionSeconds: fromFile.retentionSeconds }),
    ...(fromFile.shards !== undefined && { shards: fromFile.shards }),
  };
}

/** Whether `DIRIGENT_REQUIRE_SIGNATURES` is `1` or `true` (any case) in `env`. */
export function signaturesRequiredByEnv(
  env: Record<string, string | undefined> = process.env,
): boolean {
  return /^(1|true)$/i.test(env.DIRIGENT_REQUIRE_SIGNATURES ?? '');
}

/** Reads the text of a configuration file (see {@link loadProjectPolicy}). Pure. */
export function parsePolicy(text: string, file: string): ProjectPolicy {
  const lines = new (yaml().LineCounter)();
  const doc = yaml().parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const fail = (message: string, offset: number | undefined, hint: string): never => {
    const at = offset === undefined ? undefined : lines.linePos(offset);
    throw DirigentError.fatal(ErrorCode.INVALID_CONFIG, `${file}: ${message}`, {
      ...(at && { location: { file, line: at.line, column: at.col } }),
      hint,
    });
  };
  const first = doc.errors[0];
  if (first !== undefined) fail(first.message, first.pos[0], 'Fix the YAML syntax.');
  const root = doc.contents;
  if (root === null) return DEFAULT_POLICY;
  if (!yaml().isMap(root)) fail('must be a mapping of settings.', root.range?.[0], EXAMPLE);
  let strict = false;
  let requireSignatures = false;
  const envAllow = new Set(ALWAYS_ALLOWED_ENV);
  const limits = { ...DEFAULT_LIMITS };
  let retentionSeconds: number | undefined;
  let shards: number | undefined;
  for (const pair of (root as { items: { key: unknown; value: unknown }[] }).items) {
    const keyNode = pair.key as { value?: unknown; range?: [number] };
    const valueNode = pair.value as { range?: [number] } | null;
    const key = String(keyNode?.value);
    const value = doc.getIn([key]);
    const at = valueNode?.range?.[0] ?? keyNode?.range?.[0];
    if (key === 'strict') {
      if (typeof value !== 'boolean') fail('"strict" must be true or false.', at, EXAMPLE);
      strict = value as boolean;
    } else if (key === 'require_signatures') {
      if (typeof value !== 'boolean') {
        fail('"require_signatures" must be true or false.', at, EXAMPLE);
      }
      requireSignatures = value as boolean;
    } else if (key === 'env_allow') {
      const names = (value as { toJSON?: () => unknown } | null)?.toJSON?.() ?? value;
      if (!Array.isArray(names) || names.some((n) => typeof n !== 'string' || !ENV_NAME.test(n))) {
        fail('"env_allow" must be a list of environment variable names.', at, EXAMPLE);
      }
      for (const name of names as string[]) envAllow.add(name);
    } else if (key === 'limits') {
      const given = (value as { toJSON?: () => unknown } | null)?.toJSON?.() ?? value;
      if (given === null || typeof given !== 'object' || Array.isArray(given)) {
        fail('"limits" must be a mapping.', at, EXAMPLE);
      }
      for (const [name, n] of Object.entries(given as Record<string, unknown>)) {
        const field = LIMIT_KEYS[name];
        if (field === undefined) {
          fail(
            `"limits" has no setting "${name}".`,
            at,
            `Known: ${Object.keys(LIMIT_KEYS).join(', ')}.`,
          );
        }
        if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
          fail(`limits.${name} must be a positive whole number.`, at, EXAMPLE);
        }
        limits[field!] = n as number;
      }
    } else if (key === 'retention') {
      const seconds =
        typeof value === 'number' || typeof value === 'string' ? parseDuration(value) : undefined;
      if (seconds === undefined || seconds < 1 || seconds > MAX_RETENTION_SECONDS) {
        fail(
          `"retention" must be a duration of at least a second, not ${JSON.stringify(value)}.`,
          at,
          `Write how long ended runs are kept: ${DURATION_EXAMPLES}, e.g. retention: 30d.`,
        );
      }
      retentionSeconds = seconds;
    } else if (key === 'shards') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_SHARDS)
        fail(
          `"shards" must be a whole number from 1 to ${MAX_SHARDS}, not ${JSON.stringify(value)}.`,
          at,
          'Write how many shards a Redis deployment spreads its runs over, e.g. shards: 16 on a cluster.',
        );
      shards = value as number;
    } else {
      fail(
        `unknown setting "${key}".`,
        keyNode?.range?.[0],
        `Known settings: strict, env_allow, require_signatures, limits, retention, shards. ${EXAMPLE}`,
      );
    }
  }
  return {
    strict,
    envAllow,
    requireSignatures,
    limits,
    ...(retentionSeconds !== undefined && { retentionSeconds }),
    ...(shards !== undefined && { shards }),
  };
}

const EXAMPLE =
  'Example:\n  strict: true\n  env_allow: [REGION, STAGE]\n  require_signatures: true\n  limits:\n    inputs_bytes: 1048576\n  retention: 7d';

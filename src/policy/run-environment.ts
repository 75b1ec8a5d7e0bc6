/**
 * The environment a run's templates see (`{env:NAME}`): the variables the project allows, RYE's
 * folder variables, and the directive's declared secrets, whose values are never in it: a secret
 * reads as `***` in a run's data (renders, outputs, state), and only a tool's parameters get the
 * value, where the tool runs (`tools/bind-params.ts`).
 */
import { dirname } from 'node:path';
import type { Space } from '../items/space.js';
import { REDACTED } from '../runtimes/redact-text.js';
import type { ProjectPolicy } from './project-policy.js';

/**
 * The allowed part of `env`, with `USER_SPACE` (the folder holding the user space's `.ai`) and
 * `AI_DIR` (`.ai`) filled in when the environment does not set them.
 */
export function allowedEnvironment(
  env: Record<string, string | undefined>,
  policy: Pick<ProjectPolicy, 'envAllow'>,
  spaces: readonly Space[],
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  const user = spaces.find((s) => s.name === 'user');
  if (user !== undefined) out.USER_SPACE = dirname(user.root);
  out.AI_DIR = '.ai';
  for (const name of policy.envAllow) if (env[name] !== undefined) out[name] = env[name];
  return out;
}

/** `env` with each of `secrets` set to `***`; `env` itself when there are none. */
export function withSecretMarks(
  env: Record<string, string | undefined>,
  secrets: readonly string[],
): Record<string, string | undefined> {
  if (secrets.length === 0) return env;
  const out = { ...env };
  for (const name of secrets) out[name] = REDACTED;
  return out;
}

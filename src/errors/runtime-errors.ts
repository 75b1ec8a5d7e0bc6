/**
 * Errors of the runtimes that run tools (Python hosts, Deno sandboxes, subprocesses, HTTP and MCP
 * calls): a program that is not installed or does not start, a host that died mid-call, params
 * that cannot be sent, secrets that are not set, a request that did not reach its endpoint.
 */
import { DirigentError } from './dirigent-error.js';
import { ErrorCode } from './error-codes.js';

/**
 * `RUNTIME_UNAVAILABLE`: no `program` (`Python interpreter`, `Deno executable`) was found for
 * `tools` (`Python tools`); `tried` lists each candidate with why it failed, `fix` how to install
 * or name one.
 */
export function programNotFound(
  program: string,
  tools: string,
  tried: readonly string[],
  fix: string,
): DirigentError {
  return DirigentError.fatal(ErrorCode.RUNTIME_UNAVAILABLE, `No ${program} found for ${tools}.`, {
    hint: `Tried ${tried.join(', ')}. ${fix}`,
    details: { tried },
  });
}

/**
 * `RUNTIME_UNAVAILABLE`: `what` (`Deno for deno tool a/b`, `a Python host (python3) for …`)
 * could not be started: `reason` says why (`err.message`, `exit code 1; stderr ends: …`).
 */
export function cannotStart(
  what: string,
  reason: string,
  options: { hint?: string; details?: Record<string, unknown>; cause?: unknown } = {},
): DirigentError {
  return DirigentError.fatal(ErrorCode.RUNTIME_UNAVAILABLE, `Could not start ${what}: ${reason}`, {
    hint: options.hint ?? 'Check that the program is installed and can run on this machine.',
    ...(options.details !== undefined && { details: options.details }),
    ...(options.cause !== undefined && { cause: options.cause }),
  });
}

/**
 * `HOST_CRASHED` (retryable: a new host may do better): `host` (`The Python host running python
 * tool a/b`) ended during the call, `how` (`exited with code 137`, `was killed by SIGKILL`);
 * `stderr` is the end of what it wrote, when anything.
 */
export function hostCrashed(
  host: string,
  how: string,
  stderr: string,
  details: Record<string, unknown>,
): DirigentError {
  return DirigentError.retryable(
    ErrorCode.HOST_CRASHED,
    `${host} ${how} during the call${stderr ? `; stderr ends:\n${stderr}` : '.'}`,
    {
      hint: 'The step is tried again per its <retry> policy; a host that keeps dying points at the tool (its memory, a native crash).',
      details,
    },
  );
}

/** `INVALID_PARAMS`: the params of `label` cannot be written as JSON (`err` says why). */
export function paramsNotJson(label: string, err: unknown): DirigentError {
  return DirigentError.fatal(
    ErrorCode.INVALID_PARAMS,
    `The params of ${label} are not JSON-serialisable: ${err instanceof Error ? err.message : String(err)}`,
    {
      hint: 'Pass data JSON can write: no functions, BigInts or cycles.',
      cause: err,
    },
  );
}

/**
 * `MISSING_SECRET`: `who` (`Tool "a/b"`, `deno tool a/b`) needs the secrets `names`, which are
 * not set: neither in the environment nor, when `file` is given, in that secrets file.
 */
export function missingSecrets(
  who: string,
  names: readonly string[],
  file?: string,
): DirigentError {
  const many = names.length > 1;
  const where = file === undefined ? 'not set' : `set neither in the environment nor in ${file}`;
  const first = names[0] ?? '…';
  return DirigentError.fatal(
    ErrorCode.MISSING_SECRET,
    `${who} needs the secret${many ? 's' : ''} ${names.join(', ')}, which ${many ? 'are' : 'is'} ${where}.`,
    {
      hint:
        file === undefined
          ? `Export ${first}=… before running, or add a line "${first}=…" to the secrets file (DIRIGENT_SECRETS_FILE, outside the project).`
          : `Export ${first}=… before running, or add a line "${first}=…" to ${file} (outside the project).`,
      details: { missing: names },
    },
  );
}

/**
 * `HTTP_FAILED` (retryable): the request `request` (`http tool a/b: GET https://x/y`) got no
 * answer: `reason` is the network error (`ECONNREFUSED`, `getaddrinfo ENOTFOUND x`).
 */
export function requestFailed(
  request: string,
  reason: string,
  options: { details?: Record<string, unknown>; cause?: unknown } = {},
): DirigentError {
  return DirigentError.retryable(ErrorCode.HTTP_FAILED, `${request} failed: ${reason}.`, {
    hint: 'Check that the host answers from this machine; the step is tried again per its <retry> policy.',
    ...(options.details !== undefined && { details: options.details }),
    ...(options.cause !== undefined && { cause: options.cause }),
  });
}

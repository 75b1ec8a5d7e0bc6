/** The errors a call in a Deno host ends with, from what the harness or the process reported. */
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { redactText } from '../redact-text.js';
import { hostCrashed } from '../../errors/runtime-errors.js';
import { callTimedOut } from '../../errors/stop-errors.js';

/** An error as the harness describes it. */
export interface HarnessError {
  name: string;
  message: string;
  stack?: string;
  retryable: boolean;
  /** Deno's message when the error (or one of its causes) is a permission refusal. */
  denied?: string;
}

/** What an error message needs to know about the call. */
export interface CallFacts {
  /** `deno tool <item id>`. */
  label: string;
  projectDir: string;
  memoryMb: number;
  /** Values to hide in anything reported. */
  secrets: string[];
  /** The host's stderr during the call (not yet redacted). */
  stderr: string;
}

const OOM = /Fatal JavaScript out of memory|JavaScript heap out of memory|Reached heap limit/i;
const DENIED = /Requires (\w+) access(?: to "([^"]*)")?/;

/**
 * The error for a failure the harness reported: a permission refusal is a fatal `SANDBOX_DENIED`;
 * a module that does not load is a fatal `INVALID_TOOL` (syntax, no `execute`) or `TOOL_FAILED`;
 * a thrown error is `TOOL_FAILED`, retryable when it says so (`retryable: true` or a class named
 * `RetryableError`).
 */
export function harnessError(
  e: HarnessError,
  phase: 'load' | 'call',
  facts: CallFacts,
): DirigentError {
  const r = (s: string) => redactText(s, facts.secrets);
  const stderr = r(tail(facts.stderr, 20));
  if (e.denied !== undefined) return deniedError(r(e.denied), facts, stderr);
  const what = `${r(e.name)}: ${r(e.message)}`;
  const details = { name: r(e.name), ...(e.stack && { stack: r(e.stack) }), stderr };
  if (phase === 'load') {
    // Deno reports a module that does not parse as a TypeError whose message starts so.
    const invalid =
      e.name === 'SyntaxError' || e.name === 'InvalidTool' || e.message.startsWith('SyntaxError');
    return DirigentError.fatal(
      invalid ? ErrorCode.INVALID_TOOL : ErrorCode.TOOL_FAILED,
      `${facts.label} could not be loaded: ${what}`,
      {
        hint: invalid
          ? 'A tool is an ES module (JavaScript or TypeScript) exporting execute(input, context).'
          : 'The module threw while it was imported; top-level code runs once per warm host.',
        details,
      },
    );
  }
  return new DirigentError(ErrorCode.TOOL_FAILED, `${facts.label} threw ${what}`, {
    retryable: e.retryable,
    details,
  });
}

function deniedError(message: string, facts: CallFacts, stderr: string): DirigentError {
  const m = DENIED.exec(message);
  const kind = m?.[1] ?? 'unknown';
  const target = m?.[2];
  const refused = `${kind} access${target === undefined ? '' : ` to "${target}"`}`;
  return DirigentError.fatal(ErrorCode.SANDBOX_DENIED, `${facts.label} was refused ${refused}.`, {
    hint: deniedHint(kind, target, facts.projectDir),
    details: { kind, ...(target !== undefined && { target }), message, stderr },
  });
}

function deniedHint(kind: string, target: string | undefined, projectDir: string): string {
  switch (kind) {
    case 'net': {
      const host = target === undefined ? 'api.example.com' : hostOf(target);
      return `Declare the host in the tool: export const permissions = { network: ['${host}'] } (a host or host:port; true allows every host).`;
    }
    case 'read':
      return `A tool may read only its project (${projectDir}) and its own directory.`;
    case 'write':
      return `A tool may write only inside its project (${projectDir}).`;
    case 'env':
      return 'Tools see no environment variables: declare the name in required_secrets and read context.secrets.';
    case 'run':
      return 'Tools in the Deno sandbox may not start programs.';
    case 'ffi':
      return 'Tools in the Deno sandbox may not load native libraries.';
    case 'sys':
      return 'Tools in the Deno sandbox may not read system information.';
    case 'import':
      return "Import modules from Deno's default hosts (jsr.io, deno.land, esm.sh, …) or from files next to the tool.";
    default:
      return 'The Deno sandbox grants only reads of the project and the tool, writes to the project and the declared network hosts.';
  }
}

/** `api.example.com:443` → `api.example.com`; `[::1]:80` → `[::1]`. */
function hostOf(target: string): string {
  return target.replace(/:\d+$/, '');
}

/**
 * The error for a host process that died during a call: a V8 heap exhaustion is a fatal
 * `MEMORY_LIMIT` naming the limit; anything else a retryable `HOST_CRASHED`.
 */
export function crashError(
  exit: { code: number | null; signal: NodeJS.Signals | null },
  facts: CallFacts,
): DirigentError {
  const stderr = redactText(facts.stderr, facts.secrets);
  if (OOM.test(stderr)) {
    return DirigentError.fatal(
      ErrorCode.MEMORY_LIMIT,
      `${facts.label} ran out of memory: it reached its limit of ${facts.memoryMb} MB of JavaScript heap.`,
      {
        hint: `Raise limits.memory_mb in the tool (export const limits = { memory_mb: ${facts.memoryMb * 2} }), or make it use less memory.`,
        details: { memory_mb: facts.memoryMb },
      },
    );
  }
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  return hostCrashed(`The Deno process of ${facts.label}`, how, tail(stderr, 10), {
    exit_code: exit.code,
    signal: exit.signal,
    stderr: tail(stderr, 40),
  });
}

/** The retryable `STEP_TIMEOUT` of a call that ran out of time. */
export function timeoutError(timeoutMs: number, facts: CallFacts): DirigentError {
  return callTimedOut(facts.label, timeoutMs, {
    details: { stderr: redactText(tail(facts.stderr, 40), facts.secrets) },
  });
}

/** The last `n` non-empty lines of `text`. */
function tail(text: string, n: number): string {
  return text.trimEnd().split('\n').slice(-n).join('\n');
}

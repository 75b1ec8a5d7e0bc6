/**
 * RYE's `rye/core/primitives/subprocess`: runs `config.command` with `config.args` (no shell; a
 * runtime that wants one runs `/bin/bash -c`), `config.cwd` inside the project, `config.input_data`
 * on stdin, and reads the result as RYE does (§4.8): a JSON object printed on stdout is the result,
 * `success: false` in it or a non-zero exit is a failure; other output becomes
 * `{stdout, stderr, return_code}`.
 */
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { resolveInProject } from '../../tools/resolve-in-project.js';
import { fromRye } from '../from-rye.js';
import type { PrimitiveCall } from '../primitive.js';
import { runProcess } from '../run-process.js';
import { stderrTail } from '../stderr-tail.js';

/** Runs the configured program and converts its output. */
export async function subprocessPrimitive(call: PrimitiveCall): Promise<unknown> {
  const { config } = call;
  const label = `tool ${call.itemId}`;
  if (typeof config.command !== 'string' || config.command === '') {
    throw DirigentError.fatal(
      ErrorCode.INVALID_TOOL,
      `${label}: no command to run (the chain ${call.chain.map((l) => l.itemId).join(' → ')} sets no config.command).`,
      { hint: 'Set config.command in the tool or its runtime.' },
    );
  }
  const args = Array.isArray(config.args) ? config.args.map(asArg) : [];
  const cwd =
    typeof config.cwd === 'string' && config.cwd !== ''
      ? await resolveInProject(call.projectDir, config.cwd)
      : call.projectDir;
  const extraEnv =
    typeof config.env === 'object' && config.env !== null
      ? Object.fromEntries(Object.entries(config.env).map(([k, v]) => [k, String(v)]))
      : {};
  const result = await runProcess({
    file: config.command,
    args,
    cwd,
    env: { ...call.env, ...extraEnv, ...call.vars },
    ...(config.input_data !== undefined && { input: asArg(config.input_data) }),
    timeoutMs: call.timeoutMs,
    signal: call.signal,
    label,
  });
  const parsed = parseObject(result.stdout);
  if (parsed !== undefined) {
    if (result.exitCode === 0 || parsed.success === false) return fromRye(label, parsed);
  } else if (result.exitCode === 0) {
    return { stdout: result.stdout, stderr: result.stderr, return_code: 0 };
  }
  const tail = stderrTail(result.stderr);
  const how =
    result.exitCode === null
      ? `was killed by ${result.killedBy ?? 'a signal'}`
      : `exited with code ${result.exitCode}`;
  throw new DirigentError(
    ErrorCode.TOOL_FAILED,
    `${label} ${how}${tail ? `; stderr ends:\n${tail}` : ''}`,
    {
      retryable: parsed?.retryable === true,
      details: {
        return_code: result.exitCode,
        stdout: result.stdout.slice(-2000),
        ...(parsed && { result: parsed }),
      },
    },
  );
}

function asArg(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function parseObject(stdout: string): Record<string, unknown> | undefined {
  const text = stdout.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

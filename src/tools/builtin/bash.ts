import { stat } from 'node:fs/promises';
import { runProcess, toolEnvironment } from '../../runtimes/run-process.js';
import { SYNTAX_KEYWORD } from '../../values/syntax.js';
import { DirigentError, ErrorCode } from '../../errors/index.js';
import { abortError } from '../abort-error.js';
import { resolveInProject } from '../resolve-in-project.js';
import { type ToolDefinition } from '../tool-definition.js';
import { ignoreMissing } from '../../errors/ignore-expected.js';

/**
 * `dirigent/shell/bash`: runs `bash -c command` in the project directory (or `working_dir`, which
 * must lie inside it) and resolves `{ stdout, stderr, exit_code }` on exit 0. The command is shell
 * code ({@link SYNTAX_KEYWORD}): values a directive writes into it reach bash as variables, never
 * as code. Bash sees the filtered environment every runtime gets (`PATH`, `HOME`, `LANG`, …),
 * `TRACEPARENT` (the call's trace context, so that spans the command emits join the run's trace;
 * a step's `env` may set it otherwise), the variables of `env`, and those values; nothing else of
 * the worker's environment. A non-zero exit rejects with a retryable `COMMAND_FAILED` whose
 * `details` hold the same three fields. The command leads its own process group; on its
 * `timeout` (seconds, default 120: a retryable `STEP_TIMEOUT`) or an abort of the context's signal
 * (the abort reason, else `CANCELLED`) the whole group is killed: SIGTERM, then SIGKILL after 2 s.
 * Background processes still running when bash exits are killed with the call. `env` may not set
 * the variables through which bash runs code at start-up (`BASH_ENV`, `SHELLOPTS`, …).
 */
export const bashTool: ToolDefinition = {
  itemId: 'dirigent/shell/bash',
  description: 'Runs a bash command in the project directory.',
  paramsSchema: {
    type: 'object',
    properties: {
      command: { type: 'string', minLength: 1, [SYNTAX_KEYWORD]: 'shell' },
      env: {
        type: 'object',
        description: 'Variables to set for the command, besides the filtered environment.',
        propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
        additionalProperties: { type: 'string' },
      },
      timeout: { type: 'integer', minimum: 1, maximum: 2147483, default: 120 },
      working_dir: { type: 'string', minLength: 1 },
    },
    required: ['command'],
    additionalProperties: false,
  },
  examples: [
    {
      description: 'a command with a variable of env',
      input: { command: 'printf "%s, %s" "$GREETING" world', env: { GREETING: 'hello' } },
      output: { stdout: 'hello, world', stderr: '', exit_code: 0 },
    },
    {
      description: 'a non-zero exit is a retryable COMMAND_FAILED',
      input: { command: 'echo broken >&2; exit 3' },
      error: { code: 'COMMAND_FAILED', retryable: true },
    },
  ],
  async execute(params, ctx) {
    const command = params.command as string;
    checkEnvNames(params.env as Record<string, string> | undefined);
    const dir = params.working_dir as string | undefined;
    const cwd = dir === undefined ? ctx.projectDir : await workingDir(ctx.projectDir, dir);
    if (ctx.signal.aborted) throw abortError(ctx.signal, 'bash command');
    // TRACEPARENT comes before the step's `env`, so that the step's wins: a step that sets it
    // (to join another trace, or to empty it) does so on purpose.
    const env = toolEnvironment({
      ...(ctx.traceparent !== undefined && { TRACEPARENT: ctx.traceparent }),
      ...(params.env as Record<string, string>),
      ...ctx.vars,
    });
    const shown = ctx.asWritten?.(command) ?? command;
    return run(command, shown, cwd, env, (params.timeout as number) * 1000, ctx.signal);
  },
};

/**
 * Variables through which bash (or the loader) runs code at start-up: a file it sources
 * (`BASH_ENV`, `ENV`), options and a prompt it expands (`SHELLOPTS`, `BASHOPTS`, `PS4`,
 * `PROMPT_COMMAND`), a library loaded into every program (`LD_PRELOAD`, `LD_AUDIT`). Set from a
 * step's `env`, a value there would choose code; the command can do what they do in its text.
 */
const CODE_ENV = new Set([
  'BASH_ENV',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'PROMPT_COMMAND',
  'LD_PRELOAD',
  'LD_AUDIT',
]);

function checkEnvNames(env: Record<string, string> | undefined): void {
  const refused = Object.keys(env ?? {}).filter((name) => CODE_ENV.has(name));
  if (refused.length === 0) return;
  throw DirigentError.fatal(
    ErrorCode.INVALID_PARAMS,
    `env may not set ${refused.join(', ')}: bash (or every program it starts) would run code chosen by ${refused.length === 1 ? 'its value' : 'their values'}; the command was not run.`,
    {
      hint: 'Do it in the command itself (`source ./setup.sh`, `set -x`), where the directive says what runs.',
      details: { refused },
    },
  );
}

async function workingDir(projectDir: string, dir: string): Promise<string> {
  const path = await resolveInProject(projectDir, dir);
  if (!(await stat(path).catch(ignoreMissing))?.isDirectory()) {
    throw DirigentError.fatal(ErrorCode.FILE_NOT_FOUND, `working_dir "${dir}" is not a directory`, {
      details: { path },
    });
  }
  return path;
}

/**
 * Runs the command through the subprocess primitive; a non-zero exit is a retryable failure.
 * Messages quote the command as `shown`: as the directive's author wrote it.
 */
async function run(
  command: string,
  shown: string,
  cwd: string,
  env: Record<string, string>,
  timeoutMs: number,
  signal: AbortSignal,
) {
  const r = await runProcess({
    file: 'bash',
    args: ['-c', command],
    cwd,
    env,
    timeoutMs,
    signal,
    label: `bash command ${quote(shown)}`,
  });
  if (r.exitCode === 0) return { stdout: r.stdout, stderr: r.stderr, exit_code: 0 };
  const how =
    r.exitCode === null ? `was killed by ${r.killedBy}` : `exited with code ${r.exitCode}`;
  const tail = lastLines(r.stderr);
  const message = `bash command ${quote(shown)} ${how}${tail ? `; stderr ends:\n${tail}` : ''}`;
  const details = {
    stdout: r.stdout,
    stderr: r.stderr,
    exit_code: r.exitCode,
    ...(r.killedBy && { signal: r.killedBy }),
  };
  throw DirigentError.retryable(ErrorCode.COMMAND_FAILED, message, { details });
}

/** The last few lines of stderr, indented, for an error message a person reads. */
function lastLines(text: string, count = 5): string {
  const trimmed = text.trimEnd();
  if (trimmed === '') return '';
  const lines = trimmed.split('\n').slice(-count);
  return lines.map((line) => `  ${line.length > 300 ? `${line.slice(0, 300)}…` : line}`).join('\n');
}

function quote(command: string): string {
  const oneLine = command.replace(/\s+/g, ' ').trim();
  return JSON.stringify(oneLine.length > 80 ? `${oneLine.slice(0, 77)}...` : oneLine);
}

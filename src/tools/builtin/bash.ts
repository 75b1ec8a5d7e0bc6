import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { Capture } from '../../runtimes/output-capture.js';
import { killGroup } from '../../runtimes/process-group.js';
import { DirigentError, ErrorCode } from '../../errors/index.js';
import { abortError } from '../abort-error.js';
import { resolveInProject } from '../resolve-in-project.js';
import { type ToolDefinition } from '../tool-definition.js';

/**
 * Time the pipes get to close after bash exits. A background child (`server &`) inherits them and
 * would otherwise hold the step open until it ends.
 */
const PIPE_GRACE_MS = 200;

/**
 * `dirigent/shell/bash`: runs `bash -c command` in the project directory (or `working_dir`, which
 * must lie inside it) and resolves `{ stdout, stderr, exit_code }` on exit 0. A non-zero exit
 * rejects with a retryable `COMMAND_FAILED` whose `details` hold the same three fields. The
 * command leads its own process group; on its `timeout` (seconds, default 120: a retryable
 * `STEP_TIMEOUT`) or an abort of the context's signal (the abort reason, else `CANCELLED`) the
 * whole group is killed: SIGTERM, then SIGKILL after 2 s. Background processes still running when
 * bash exits normally are left alone.
 */
export const bashTool: ToolDefinition = {
  itemId: 'dirigent/shell/bash',
  description: 'Runs a bash command in the project directory.',
  paramsSchema: {
    type: 'object',
    properties: {
      command: { type: 'string', minLength: 1 },
      timeout: { type: 'integer', minimum: 1, maximum: 2147483, default: 120 },
      working_dir: { type: 'string', minLength: 1 },
    },
    required: ['command'],
    additionalProperties: false,
  },
  async execute(params, ctx) {
    const command = params.command as string;
    const dir = params.working_dir as string | undefined;
    const cwd = dir === undefined ? ctx.projectDir : await workingDir(ctx.projectDir, dir);
    if (ctx.signal.aborted) throw abortError(ctx.signal, 'bash command');
    return run(command, cwd, (params.timeout as number) * 1000, ctx.signal);
  },
};

async function workingDir(projectDir: string, dir: string): Promise<string> {
  const path = await resolveInProject(projectDir, dir);
  if (!(await stat(path).catch(() => undefined))?.isDirectory()) {
    throw DirigentError.fatal(ErrorCode.FILE_NOT_FOUND, `working_dir "${dir}" is not a directory`, {
      details: { path },
    });
  }
  return path;
}

function run(command: string, cwd: string, timeoutMs: number, signal: AbortSignal) {
  return new Promise<{ stdout: string; stderr: string; exit_code: number }>((resolve, reject) => {
    // detached: setsid(), so the command and everything it forks form one group we can kill.
    const child = spawn('bash', ['-c', command], {
      cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = new Capture('stdout');
    const err = new Capture('stderr');
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    let settled = false;
    let killing = false;
    let pipeTimer: NodeJS.Timeout | undefined;
    const finish = (error: DirigentError | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(pipeTimer);
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve({ stdout: out.text(), stderr: err.text(), exit_code: 0 });
    };
    // Settle only once the group is gone, so no process of the step outlives its failure.
    const stop = (error: () => DirigentError) => {
      if (killing || settled) return;
      killing = true;
      const pid = child.pid;
      void (pid === undefined ? Promise.resolve() : killGroup(pid)).then(() => finish(error()));
    };
    const onAbort = () => stop(() => abortError(signal, 'bash command'));
    const timer = setTimeout(() => {
      stop(() =>
        DirigentError.retryable(
          ErrorCode.STEP_TIMEOUT,
          `bash command ${quote(command)} timed out after ${timeoutMs / 1000} s`,
          { details: { stdout: out.text(), stderr: err.text(), exit_code: null } },
        ),
      );
    }, timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });

    child.on('error', (e) => {
      const message = `could not run bash: ${e.message}`;
      finish(DirigentError.fatal(ErrorCode.TOOL_FAILED, message, { cause: e }));
    });
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    const complete = () => {
      if (killing || settled || exit === undefined) return;
      const { code, signal: killedBy } = exit;
      if (code === 0) return finish(undefined);
      const stdout = out.text();
      const stderr = err.text();
      const how = code === null ? `was killed by ${killedBy}` : `exited with code ${code}`;
      const tail = lastLines(stderr);
      const message = `bash command ${quote(command)} ${how}${tail ? `; stderr ends:\n${tail}` : ''}`;
      const details = { stdout, stderr, exit_code: code, ...(killedBy && { signal: killedBy }) };
      finish(DirigentError.retryable(ErrorCode.COMMAND_FAILED, message, { details }));
    };
    child.on('exit', (code, killedBy) => {
      exit = { code, signal: killedBy };
      pipeTimer = setTimeout(() => {
        // A background child still holds the pipes: stop reading and report what we have.
        child.stdout.destroy();
        child.stderr.destroy();
        complete();
      }, PIPE_GRACE_MS);
    });
    child.on('close', complete);
  });
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

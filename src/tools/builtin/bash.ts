import { spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { DirigentError, ErrorCode } from '../../errors/index.js';
import { abortError } from '../abort-error.js';
import { resolveInProject } from '../resolve-in-project.js';
import { type ToolDefinition } from '../tool-definition.js';

/** Bytes kept of each of stdout and stderr; the rest is drained (so the child never blocks). */
const MAX_OUTPUT = 1024 * 1024;
/** Time a process group gets to exit after SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 2000;
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

/** Kills a whole process group: SIGTERM, then SIGKILL if any member outlives the grace. */
async function killGroup(pgid: number): Promise<void> {
  if (!signalGroup(pgid, 'SIGTERM')) return;
  if (await groupGone(pgid, KILL_GRACE_MS)) return;
  signalGroup(pgid, 'SIGKILL');
  await groupGone(pgid, 1000);
}

/** False when the group no longer exists (ESRCH). */
function signalGroup(pgid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}

async function groupGone(pgid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (await groupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await delay(25);
  }
  return true;
}

/**
 * Whether a live process is left in the group. Zombies do not count: they are dead and only wait
 * for init to reap them, which in some containers takes seconds.
 */
async function groupAlive(pgid: number): Promise<boolean> {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== 'linux') return true;
  const pids = await readdir('/proc').catch(() => undefined);
  if (pids === undefined) return true; // no /proc to tell zombies apart: trust kill()
  for (const pid of pids) {
    if (pid.charCodeAt(0) > 57) continue; // not a process directory
    const line = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // Fields after the command name (which may hold spaces): state, ppid, pgrp, ...
    const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
    if (fields[2] === String(pgid) && fields[0] !== 'Z') return true;
  }
  return false;
}

/** Collects one output stream up to {@link MAX_OUTPUT} bytes and notes what it dropped. */
class Capture {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private dropped = 0;
  constructor(private readonly name: string) {}

  push(chunk: Buffer): void {
    const room = MAX_OUTPUT - this.size;
    if (chunk.length > room) this.dropped += chunk.length - room;
    if (room <= 0) return;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(kept);
    this.size += kept.length;
  }

  text(): string {
    const text = Buffer.concat(this.chunks, this.size).toString('utf8');
    if (this.dropped === 0) return text;
    return `${text}\n[dirigent: ${this.name} truncated at ${MAX_OUTPUT} bytes; ${this.dropped} more dropped]`;
  }
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

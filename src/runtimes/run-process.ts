/**
 * The subprocess primitive: runs a program (no shell) as the leader of its own process group,
 * captures its output with a size cap, and kills the whole group before it settles: on timeout or
 * abort, and when the program ends, whatever it left running in the background. No process of a
 * call outlives it, and none outlives this process either (`group-reaper.ts`).
 */
import { spawn } from 'node:child_process';
import { DirigentError } from '../errors/dirigent-error.js';
import { abortError } from '../tools/abort-error.js';
import { Capture } from './output-capture.js';
import { endGroup, guardGroup } from './group-reaper.js';
import { killGroup } from './process-group.js';
import { cannotStart } from '../errors/runtime-errors.js';
import { callTimedOut } from '../errors/stop-errors.js';

/** What to run. */
export interface ProcessSpec {
  file: string;
  args: readonly string[];
  cwd: string;
  /** The whole environment of the child (filter it before: nothing is inherited). */
  env: Record<string, string>;
  /** Written to stdin, which is then closed. */
  input?: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** How messages name the process (`python tool rye/x`). */
  label: string;
}

/** How the process ended. A non-zero exit is not an error here: callers decide what it means. */
export interface ProcessResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  killedBy: NodeJS.Signals | null;
}

/** Time the pipes get to close after the process exits (a background child may hold them). */
const PIPE_GRACE_MS = 200;
/** After the grace, how long output still arriving is read before the pipes are closed. */
const DRAIN_MS = 1000;

/** Runs `spec`; rejects on timeout (retryable `STEP_TIMEOUT`), abort, or when it cannot start. */
export function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    if (spec.signal.aborted) return reject(abortError(spec.signal, spec.label));
    // Without input, stdin is /dev/null, not a pipe: Node's pipes are sockets, and bash run with
    // a socket on stdin takes itself for a remote shell and sources ~/.bashrc (the worker user's
    // start-up files, 100 ms here), which a tool has no business running.
    const child = spawn(spec.file, [...spec.args], {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: [spec.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    if (pid !== undefined) guardGroup(pid);
    const out = new Capture('stdout');
    const err = new Capture('stderr');
    let chunks = 0;
    child.stdout!.on('data', (c: Buffer) => (out.push(c), chunks++));
    child.stderr!.on('data', (c: Buffer) => (err.push(c), chunks++));
    if (child.stdin !== null) {
      child.stdin.on('error', () => undefined); // a child that exits without reading stdin
      child.stdin.end(spec.input);
    }
    let settled = false;
    let killing = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let pipeTimer: NodeJS.Timeout | undefined;
    const finish = (error?: DirigentError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(pipeTimer);
      spec.signal.removeEventListener('abort', onAbort);
      // The call is over: what it left in its group (a background child) goes with it.
      if (pid !== undefined) endGroup(pid);
      if (error) reject(error);
      else
        resolve({
          stdout: out.text(),
          stderr: err.text(),
          exitCode: exit?.code ?? null,
          killedBy: exit?.signal ?? null,
        });
    };
    const stop = (error: () => DirigentError) => {
      if (killing || settled) return;
      killing = true;
      void (pid === undefined ? Promise.resolve() : killGroup(pid)).then(() => finish(error()));
    };
    const onAbort = () => stop(() => abortError(spec.signal, spec.label));
    const timer = setTimeout(
      () =>
        stop(() =>
          callTimedOut(spec.label, spec.timeoutMs, {
            details: { stdout: out.text(), stderr: err.text(), exit_code: null },
          }),
        ),
      spec.timeoutMs,
    );
    spec.signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e) => finish(cannotStart(spec.label, e.message, { cause: e })));
    const complete = () => {
      if (!killing && exit !== undefined) finish();
    };
    // The pipes are closed once they have been read dry: a timer runs before the loop reads what
    // waits in a pipe, so on a busy machine the output the process wrote before it exited may be
    // unread when the grace is over. Each look comes after a round of reading (setImmediate), and
    // the pipes are closed at the first round that brought nothing, or DRAIN_MS on.
    const drain = (until: number) => {
      const seen = chunks;
      setImmediate(() => {
        if (chunks !== seen && Date.now() < until) return drain(until);
        child.stdout!.destroy();
        child.stderr!.destroy();
        complete();
      });
    };
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      pipeTimer = setTimeout(() => drain(Date.now() + DRAIN_MS), PIPE_GRACE_MS);
    });
    child.on('close', complete);
  });
}

/** The environment a tool process gets: the basics only, plus what the caller adds. */
export function toolEnvironment(extra: Record<string, string> = {}): Record<string, string> {
  const keep = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'USER'];
  const env: Record<string, string> = {};
  for (const k of keep) if (process.env[k] !== undefined) env[k] = process.env[k]!;
  return { ...env, ...extra };
}

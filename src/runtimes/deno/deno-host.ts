/**
 * One warm Deno process serving one tool module: the harness imports the module once, then
 * answers JSON-line requests, one at a time. The process leads its own process group, which is
 * killed whole on timeout, abort or close.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { DirigentError } from '../../errors/dirigent-error.js';
import { abortError } from '../../tools/abort-error.js';
import { endGroup, guardGroup } from '../group-reaper.js';
import { killGroup } from '../process-group.js';
import {
  crashError,
  harnessError,
  timeoutError,
  type CallFacts,
  type HarnessError,
} from './deno-call-errors.js';
import { denoArgs, denoEnvironment, type DenoHostSpec } from './deno-args.js';
import { redactText } from '../redact-text.js';
import { cannotStart, paramsNotJson } from '../../errors/runtime-errors.js';

/** What one call sends to the harness. */
export interface HostRequest {
  input: Record<string, unknown>;
  secrets: Record<string, string>;
  projectPath: string;
  itemId: string;
  /** The call's W3C trace context, `context.traceparent` of the tool. */
  traceparent?: string;
}

/** How one call is bounded and described. */
export interface HostCallOptions {
  timeoutMs: number;
  signal: AbortSignal;
  label: string;
  /** Values hidden in every error of the call. */
  redact: string[];
  /** Receives the tool's output during the call, redacted. */
  onLog?: (text: string) => void;
}

interface Response {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: HarnessError;
  phase?: 'load';
}

interface Pending {
  id: number;
  onLog: ((text: string) => void) | undefined;
  onResponse(r: Response): void;
  onExit(): void;
  stop(error: () => DirigentError): void;
}

/** Bytes of stderr (and stray stdout) kept per call, for error messages. */
const TAIL_BYTES = 32 * 1024;
/** Time the pipes get to close after the process exits. */
const PIPE_GRACE_MS = 300;
/** The longest delay `setTimeout` takes; longer ones fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** A Deno process running the harness for one tool. */
export class DenoHost {
  /** Process id, also the id of its process group. */
  readonly pid: number | undefined;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly nonce = randomBytes(16).toString('hex');
  /** Stdout received since the last newline. */
  private partial: string[] = [];
  private stderrTail = '';
  private nextId = 1;
  private current: Pending | undefined;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private gone = false;
  private broken = false;
  private killing: Promise<void> | undefined;
  private spawnError: Error | undefined;

  constructor(
    readonly key: string,
    readonly spec: DenoHostSpec,
  ) {
    this.child = spawn(spec.deno, denoArgs(spec), {
      cwd: spec.projectDir,
      env: denoEnvironment(spec.denoDir),
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.pid = this.child.pid;
    if (this.pid !== undefined) guardGroup(this.pid);
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => this.onStdout(chunk));
    this.child.stderr.on('data', (chunk: string) => this.keep(chunk));
    this.child.stdin.on('error', () => undefined); // the host died: 'exit' reports it
    this.child.on('error', (err) => {
      this.spawnError = err;
      this.finish();
    });
    let pipeTimer: NodeJS.Timeout | undefined;
    this.child.on('exit', (code, signal) => {
      this.exit = { code, signal };
      // Whatever the host started goes with it.
      if (this.pid !== undefined) endGroup(this.pid);
      pipeTimer = setTimeout(() => this.finish(), PIPE_GRACE_MS);
      pipeTimer.unref();
    });
    this.child.on('close', () => {
      clearTimeout(pipeTimer);
      this.finish();
    });
    this.child.stdin.write(`${this.nonce}\n`);
    this.setRef(false);
  }

  /** Whether the host can take a call. */
  get usable(): boolean {
    return !this.gone && !this.broken && this.killing === undefined && this.exit === undefined;
  }

  /** Whether a call is in flight. */
  get busy(): boolean {
    return this.current !== undefined;
  }

  /**
   * Runs one call of the tool. Rejects with the tool's error, `STEP_TIMEOUT` (retryable) or the
   * abort reason after killing the process group, `MEMORY_LIMIT` or `HOST_CRASHED` when the process
   * dies, `SANDBOX_DENIED` when Deno refused a permission.
   */
  call(request: HostRequest, options: HostCallOptions): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (options.signal.aborted) return reject(abortError(options.signal, options.label));
      if (this.current !== undefined) throw new Error('DenoHost.call while a call is in flight');
      const id = this.nextId++;
      let line: string;
      try {
        line = JSON.stringify({ id, ...request });
      } catch (err) {
        return reject(paramsNotJson(options.label, err));
      }
      const facts = (): CallFacts => ({
        label: options.label,
        projectDir: this.spec.projectDir,
        memoryMb: this.spec.memoryMb,
        secrets: options.redact,
        stderr: this.stderrTail,
      });
      let settled = false;
      let stopping = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        if (this.current === pending) this.current = undefined;
        this.setRef(false);
        fn();
      };
      const stop = (error: () => DirigentError) => {
        if (stopping || settled) return;
        stopping = true;
        void this.kill().then(() => settle(() => reject(error())));
      };
      const sink = options.onLog;
      const pending: Pending = {
        id,
        stop,
        onLog: sink && ((text) => sink(redactText(text, options.redact))),
        onResponse: (r) => {
          if (stopping) return;
          if (r.ok) return settle(() => resolve(r.result ?? null));
          if (r.phase === 'load') {
            this.broken = true;
            void this.kill();
          }
          const error = r.error ?? {
            name: 'Error',
            message: 'no error reported',
            retryable: false,
          };
          settle(() => reject(harnessError(error, r.phase ?? 'call', facts())));
        },
        onExit: () => {
          if (stopping) return;
          if (this.spawnError !== undefined) {
            const e = this.spawnError;
            return settle(() =>
              reject(
                cannotStart(`Deno for ${options.label}`, e.message, {
                  hint: 'Run npm install (Dirigent depends on the deno package), or set DIRIGENT_DENO to a deno binary.',
                  cause: e,
                }),
              ),
            );
          }
          const exit = this.exit ?? { code: null, signal: null };
          settle(() => reject(crashError(exit, facts())));
        },
      };
      const onAbort = () => stop(() => abortError(options.signal, options.label));
      const timer = setTimeout(
        () => stop(() => timeoutError(options.timeoutMs, facts())),
        Math.min(Math.max(0, options.timeoutMs), MAX_TIMER_MS),
      );
      options.signal.addEventListener('abort', onAbort, { once: true });
      this.current = pending;
      this.stderrTail = '';
      this.setRef(true);
      if (this.gone) return pending.onExit();
      this.child.stdin.write(`${line}\n`);
    });
  }

  /**
   * Kills the process group and waits until it is gone. A call in flight rejects with `reason`
   * (default: the crash error its death gives).
   */
  kill(reason?: () => DirigentError): Promise<void> {
    if (reason !== undefined && this.current !== undefined) {
      this.current.stop(reason);
    }
    if (this.killing === undefined) {
      const pid = this.pid;
      this.killing =
        pid === undefined || this.gone
          ? Promise.resolve()
          : killGroup(pid).catch(() => {
              /* A group that cannot be signalled is gone already, which is what killing wants. */
            });
    }
    return this.killing;
  }

  private onStdout(chunk: string): void {
    let start = 0;
    let at: number;
    while ((at = chunk.indexOf('\n', start)) !== -1) {
      const piece = chunk.slice(start, at);
      const line = this.partial.length === 0 ? piece : this.partial.join('') + piece;
      this.partial = [];
      start = at + 1;
      this.onLine(line);
    }
    if (start < chunk.length) this.partial.push(chunk.slice(start));
  }

  private onLine(line: string): void {
    if (!line.startsWith(this.nonce)) {
      this.keep(`${line}\n`); // the tool wrote to Deno.stdout itself
      return;
    }
    let response: Response;
    try {
      response = JSON.parse(line.slice(this.nonce.length)) as Response;
    } catch {
      return;
    }
    const pending = this.current;
    if (pending !== undefined && (response.id === pending.id || response.phase === 'load'))
      pending.onResponse(response);
    else if (response.phase === 'load') this.broken = true;
  }

  private keep(text: string): void {
    this.current?.onLog?.(text);
    this.stderrTail += text;
    if (this.stderrTail.length > TAIL_BYTES * 2)
      this.stderrTail = this.stderrTail.slice(-TAIL_BYTES);
  }

  private finish(): void {
    if (this.gone) return;
    this.gone = true;
    this.setRef(false);
    this.current?.onExit();
  }

  /** Keeps Node alive while a call is in flight, and never otherwise. */
  private setRef(on: boolean): void {
    const handles = [
      this.child,
      this.child.stdin,
      this.child.stdout,
      this.child.stderr,
    ] as unknown as Array<Partial<Pick<Socket, 'ref' | 'unref'>>>;
    for (const h of handles) {
      if (on) h.ref?.();
      else h.unref?.();
    }
  }
}

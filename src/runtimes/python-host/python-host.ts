/**
 * One warm Python process: runs one call at a time, and is given up (its process group killed)
 * after a timeout, an abort or a crash. {@link PythonHostPool} keeps, reuses and replaces them.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { DirigentError } from '../../errors/dirigent-error.js';
import { abortError } from '../../tools/abort-error.js';
import { fromRye } from '../from-rye.js';
import { Capture } from '../output-capture.js';
import { guardGroup, releaseGroup } from '../group-reaper.js';
import { killGroup } from '../process-group.js';
import type { PythonException } from '../python-tool-error.js';
import { pythonToolError } from '../python-tool-error.js';
import { toolEnvironment } from '../run-process.js';
import { stderrTail } from '../stderr-tail.js';
import type { PythonHostCall } from './python-host-call.js';
import { PYTHON_HOST_SOURCE } from './python-host-source.js';
import { cannotStart, hostCrashed } from '../../errors/runtime-errors.js';
import { callTimedOut } from '../../errors/stop-errors.js';

/** A call waiting for, or running on, a host. */
export interface PythonHostJob {
  call: PythonHostCall;
  /** The request id, unique in the pool. */
  id: number;
  /** The request as one JSON line (without the newline). */
  line: string;
  resolve: (value: unknown) => void;
  reject: (error: DirigentError) => void;
}

/** What a host tells its pool. */
export interface PythonHostListener {
  /** The host finished a call and can take the next one. */
  idle(host: PythonHost): void;
  /** The host is dead or being killed: never give it another call. */
  gone(host: PythonHost): void;
}

interface Response {
  ready?: number;
  id?: number;
  result?: unknown;
  exception?: PythonException;
}

/** Time stdout gets to deliver its last data after the process exits. */
const DRAIN_GRACE_MS = 200;

/** A long-lived Python process that imports tool modules once and calls their `execute`. */
export class PythonHost {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly nonce = randomBytes(12).toString('hex');
  private state: 'idle' | 'busy' | 'dead' = 'idle';
  private ready = false;
  private exited = false;
  private job: PythonHostJob | undefined;
  private timer: NodeJS.Timeout | undefined;
  private onAbort: (() => void) | undefined;
  private pending = '';
  private stdout = new Capture('stdout');
  private stderr = new Capture('stderr');

  constructor(
    /** The interpreter. */
    readonly python: string,
    /** The working directory, the project the tools belong to. */
    readonly projectDir: string,
    private readonly listener: PythonHostListener,
  ) {
    this.child = spawn(python, ['-u', '-c', PYTHON_HOST_SOURCE, this.nonce], {
      cwd: projectDir,
      env: toolEnvironment({ PYTHONUNBUFFERED: '1' }),
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const pid = this.child.pid;
    if (pid !== undefined) guardGroup(pid);
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (text: string) => this.onStdout(text));
    this.child.stderr.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    this.child.stdin.on('error', () => undefined); // EPIPE from a host that died
    this.child.on('error', (e) => this.onSpawnError(e));
    this.child.on('exit', (code, signal) => this.onExit(code, signal));
  }

  /** Whether the host can take a call now. */
  get idle(): boolean {
    return this.state === 'idle' && !this.exited;
  }

  /** Sends `job` to the host; the host settles it. Only when {@link idle}. */
  run(job: PythonHostJob): void {
    if (!this.idle) throw new Error('PythonHost.run on a host that is not idle');
    const { call } = job;
    this.state = 'busy';
    this.job = job;
    this.stdout = new Capture('stdout');
    this.stderr = new Capture('stderr');
    this.setRef(true);
    this.onAbort = () => this.stop(() => abortError(call.signal, label(call)));
    call.signal.addEventListener('abort', this.onAbort, { once: true });
    this.timer = setTimeout(
      () => this.stop(() => callTimedOut(label(call), call.timeoutMs, { details: this.output() })),
      call.timeoutMs,
    );
    this.child.stdin.write(`${job.line}\n`);
    if (call.signal.aborted) this.onAbort();
  }

  /**
   * Kills the host's process group; a call in flight rejects with `reason`. Resolves once the
   * group is gone.
   */
  async shutdown(reason: (call: PythonHostCall) => DirigentError): Promise<void> {
    if (this.state === 'dead') return;
    const job = this.release();
    this.die();
    await this.killGroup();
    job?.reject(reason(job.call));
  }

  /** Stops the call in flight (timeout, abort): kills the group, then rejects with `error`. */
  private stop(error: () => DirigentError): void {
    if (this.state !== 'busy') return;
    const job = this.release();
    this.die();
    void this.killGroup().then(() => job?.reject(error()));
  }

  private onStdout(text: string): void {
    this.pending += text;
    let nl = this.pending.indexOf('\n');
    while (nl !== -1) {
      const line = this.pending.slice(0, nl);
      this.pending = this.pending.slice(nl + 1);
      if (line.startsWith(this.nonce)) this.onResponse(line.slice(this.nonce.length));
      else if (line !== '') this.stdout.push(Buffer.from(`${line}\n`));
      nl = this.pending.indexOf('\n');
    }
  }

  private onResponse(text: string): void {
    let response: Response;
    try {
      response = JSON.parse(text) as Response;
    } catch {
      return; // not ours after all
    }
    if (response.ready !== undefined) {
      this.ready = true;
      return;
    }
    const job = this.job;
    if (job === undefined || response.id !== job.id || this.state !== 'busy') return;
    const output = this.output();
    this.release();
    this.state = 'idle';
    this.setRef(false);
    this.listener.idle(this);
    const name = label(job.call);
    if (response.exception) {
      job.reject(pythonToolError(name, response.exception, output));
      return;
    }
    try {
      job.resolve(
        job.call.format === 'seed' ? response.result : fromRye(name, response.result ?? null),
      );
    } catch (err) {
      job.reject(err as DirigentError);
    }
  }

  private onSpawnError(e: Error): void {
    if (this.state === 'dead') return;
    const job = this.release();
    this.die();
    if (job === undefined) return;
    job.reject(
      cannotStart(`a Python host (${this.python}) for ${label(job.call)}`, e.message, {
        hint: PYTHON_HINT,
        cause: e,
      }),
    );
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.exited = true;
    const settle = () => {
      clearTimeout(grace);
      this.child.stdout.off('end', settle);
      this.child.stdout.destroy();
      this.child.stderr.destroy();
      if (this.state === 'dead') return; // killed on purpose: the killer settles the call
      const job = this.release();
      const ready = this.ready;
      const output = this.output();
      this.die();
      // Whatever the tool forked may still run in the group.
      void this.killGroup();
      if (job === undefined) return;
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const tail = stderrTail(output.stderr ?? '');
      const details = { exit_code: code, signal, ...output };
      job.reject(
        ready
          ? hostCrashed(`The Python host running ${label(job.call)}`, how, tail, details)
          : cannotStart(
              `a Python host (${this.python}) for ${label(job.call)}`,
              `it ${how} before it was ready${tail ? `; stderr ends:\n${tail}` : '.'}`,
              { hint: PYTHON_HINT, details },
            ),
      );
    };
    // Let stdout deliver a response written just before the exit.
    const grace = setTimeout(settle, DRAIN_GRACE_MS);
    if (this.child.stdout.readableEnded || this.job === undefined) settle();
    else this.child.stdout.once('end', settle);
  }

  /** Clears the call in flight and returns it. */
  private release(): PythonHostJob | undefined {
    const job = this.job;
    this.job = undefined;
    clearTimeout(this.timer);
    if (this.onAbort) job?.call.signal.removeEventListener('abort', this.onAbort);
    this.onAbort = undefined;
    return job;
  }

  /** Marks the host dead and tells the pool, once. */
  private die(): void {
    if (this.state === 'dead') return;
    this.state = 'dead';
    this.setRef(false);
    this.child.stdin.destroy();
    this.listener.gone(this);
  }

  private async killGroup(): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined) return;
    await killGroup(pid);
    releaseGroup(pid);
  }

  private output(): { stdout?: string; stderr?: string } {
    const out: { stdout?: string; stderr?: string } = {};
    const stdout = this.stdout.text();
    const stderr = this.stderr.text();
    if (stdout) out.stdout = stdout;
    if (stderr) out.stderr = stderr;
    return out;
  }

  /** While idle, neither the process nor its pipes keep Node running. */
  private setRef(on: boolean): void {
    const handles = [this.child.stdin, this.child.stdout, this.child.stderr] as unknown as Socket[];
    if (on) {
      this.child.ref();
      for (const h of handles) h.ref?.();
    } else {
      this.child.unref();
      for (const h of handles) h.unref?.();
    }
  }
}

const PYTHON_HINT =
  'Check the interpreter: a working Python 3 in the project .venv, $RYE_PYTHON or python3 on the PATH.';

function label(call: PythonHostCall): string {
  return `python tool ${call.itemId}`;
}

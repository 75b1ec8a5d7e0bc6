/**
 * The warm runtime of Python function tools: long-lived Python processes ({@link PythonHost})
 * that import a tool once and call its `execute` over a JSON-lines protocol, instead of starting
 * Python for every call.
 */
import { DirigentError } from '../../errors/dirigent-error.js';
import { abortError } from '../../tools/abort-error.js';
import type { PythonHostCall } from './python-host-call.js';
import { PythonHost, type PythonHostJob, type PythonHostListener } from './python-host.js';
import { cancelled } from '../../errors/stop-errors.js';
import { paramsNotJson } from '../../errors/runtime-errors.js';

export type { PythonHostCall } from './python-host-call.js';

/** Options of a {@link PythonHostPool}. */
export interface PythonHostPoolOptions {
  /**
   * Hosts at most per interpreter and project directory, so calls that may run at once.
   * Default: `$DIRIGENT_PYTHON_HOSTS`, else 2.
   */
  size?: number;
}

/** Counters of a pool, for tests and diagnostics. */
export interface PythonHostPoolStats {
  /** Host processes started. */
  started: number;
  /** Hosts given up after a timeout, an abort or a crash (a new one starts when needed). */
  replaced: number;
  /** Hosts alive now. */
  alive: number;
  /** Calls waiting for a free host. */
  queued: number;
}

/** The hosts of one interpreter and project directory, and the calls waiting for them. */
interface Group {
  hosts: PythonHost[];
  queue: Queued[];
}

interface Queued extends PythonHostJob {
  /** Takes the call out of the queue when its signal aborts first. */
  onAbort: () => void;
}

/**
 * A pool of warm Python hosts, kept per (interpreter, project directory); a host's working
 * directory is the project. Hosts start when a call needs one and are reused; each runs one call
 * at a time, and calls wait first in, first out for a free host, so calls to the same tool may run
 * in parallel on different hosts. A call that times out or is aborted kills its host's process
 * group (with whatever the tool forked); a host that dies is replaced by the next call. An idle
 * pool never keeps Node running.
 */
export class PythonHostPool {
  private readonly size: number;
  private readonly groups = new Map<string, Group>();
  private readonly listener: PythonHostListener;
  private nextId = 1;
  private started = 0;
  private replaced = 0;
  private isClosed = false;

  constructor(options: PythonHostPoolOptions = {}) {
    const size = options.size ?? (Number(process.env.DIRIGENT_PYTHON_HOSTS) || 2);
    this.size = Math.max(1, Math.floor(size) || 1);
    this.listener = {
      idle: (host) => this.pump(this.groupOf(host)),
      gone: (host) => this.onGone(host),
    };
  }

  /** Whether {@link close} was called. */
  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Calls the tool's `execute` on a free host and returns its result. Rejects with `TOOL_FAILED`
   * (the tool raised, or returned RYE's `success: false`), a retryable `STEP_TIMEOUT` after
   * `timeoutMs`, the abort reason, a retryable `HOST_CRASHED` when the host died during the call,
   * or a fatal `RUNTIME_UNAVAILABLE` when no host could start.
   */
  call(call: PythonHostCall): Promise<unknown> {
    if (this.isClosed) {
      return Promise.reject(closedError(call));
    }
    if (call.signal.aborted) return Promise.reject(abortError(call.signal, label(call)));
    const id = this.nextId++;
    let line: string;
    try {
      line = JSON.stringify({
        id,
        file: call.file,
        params: call.params,
        project: call.projectDir,
        env: call.env ?? {},
        ...(call.traceparent !== undefined && { traceparent: call.traceparent }),
      });
    } catch (err) {
      return Promise.reject(paramsNotJson(label(call), err));
    }
    const group = this.group(call.python, call.projectDir);
    return new Promise((resolve, reject) => {
      const queued: Queued = {
        call,
        id,
        line,
        resolve,
        reject,
        onAbort: () => {
          const at = group.queue.indexOf(queued);
          if (at === -1) return;
          group.queue.splice(at, 1);
          reject(abortError(call.signal, label(call)));
        },
      };
      call.signal.addEventListener('abort', queued.onAbort, { once: true });
      group.queue.push(queued);
      this.pump(group);
    });
  }

  /** Kills every host and rejects the calls in flight or waiting with `CANCELLED`. Idempotent. */
  async close(): Promise<void> {
    this.isClosed = true;
    const hosts: PythonHost[] = [];
    for (const group of this.groups.values()) {
      for (const q of group.queue.splice(0)) {
        q.call.signal.removeEventListener('abort', q.onAbort);
        q.reject(closedError(q.call));
      }
      hosts.push(...group.hosts);
    }
    await Promise.all(hosts.map((h) => h.shutdown(closedError)));
  }

  /** Counters: hosts started, replaced and alive, calls queued. */
  stats(): PythonHostPoolStats {
    let alive = 0;
    let queued = 0;
    for (const g of this.groups.values()) {
      alive += g.hosts.length;
      queued += g.queue.length;
    }
    return { started: this.started, replaced: this.replaced, alive, queued };
  }

  /** Gives waiting calls to idle hosts, starting hosts up to the size. */
  private pump(group: Group): void {
    while (group.queue.length > 0 && !this.isClosed) {
      let host = group.hosts.find((h) => h.idle);
      if (host === undefined) {
        if (group.hosts.length >= this.size) return;
        const { python, projectDir } = group.queue[0]!.call;
        host = new PythonHost(python, projectDir, this.listener);
        this.started++;
        group.hosts.push(host);
      }
      const job = group.queue.shift()!;
      job.call.signal.removeEventListener('abort', job.onAbort);
      host.run({
        call: job.call,
        id: job.id,
        line: job.line,
        resolve: job.resolve,
        reject: job.reject,
      });
    }
  }

  private onGone(host: PythonHost): void {
    const group = this.groupOf(host);
    const at = group.hosts.indexOf(host);
    if (at === -1) return;
    group.hosts.splice(at, 1);
    if (!this.isClosed) this.replaced++;
    this.pump(group);
  }

  private group(python: string, projectDir: string): Group {
    const key = `${python}\0${projectDir}`;
    let group = this.groups.get(key);
    if (group === undefined) {
      group = { hosts: [], queue: [] };
      this.groups.set(key, group);
    }
    return group;
  }

  private groupOf(host: PythonHost): Group {
    return this.group(host.python, host.projectDir);
  }
}

function label(call: PythonHostCall): string {
  return `python tool ${call.itemId}`;
}

function closedError(call: PythonHostCall): DirigentError {
  return cancelled(label(call), 'the Python host pool is closed');
}

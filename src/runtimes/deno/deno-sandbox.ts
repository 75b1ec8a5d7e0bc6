/**
 * Runs JS/TS tools in Deno with least privilege, keeping one warm process per tool module
 * (per content hash, permissions and memory limit) that imports the module once and serves calls
 * over JSON lines. A busy host is never shared: a concurrent call of the same tool gets a host of
 * its own, so a timeout or crash of one call never takes another down.
 */
import { createHash } from 'node:crypto';
import { readFile, realpath } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { abortError } from '../../tools/abort-error.js';
import { fromRye } from '../from-rye.js';
import type { DenoHostSpec } from './deno-args.js';
import { resolveDeno } from './deno-binary.js';
import { denoCacheRoot, harnessFile } from './deno-cache-dir.js';
import { DenoHost } from './deno-host.js';
import type { DenoToolCall } from './deno-tool-call.js';
import { cancelled } from '../../errors/stop-errors.js';
import { missingSecrets } from '../../errors/runtime-errors.js';

/** V8 heap limit of a tool that declares no `limits.memory_mb`, MB. */
export const DEFAULT_MEMORY_MB = 128;

/** Tuning of a {@link DenoSandbox}. */
export interface DenoSandboxOptions {
  /** An idle host is closed after this long, ms (default 60 000). */
  idleMs?: number;
  /** Idle hosts kept per tool (default 2); more are closed when their call ends. */
  maxIdlePerTool?: number;
  /** Environment read for `DIRIGENT_DENO` and `XDG_CACHE_HOME` (default `process.env`). */
  env?: Record<string, string | undefined>;
}

/** A pool of warm Deno hosts running JS/TS tools in a sandbox. */
export class DenoSandbox {
  private readonly idle = new Map<string, DenoHost[]>();
  private readonly hosts = new Set<DenoHost>();
  private readonly idleTimers = new Map<DenoHost, NodeJS.Timeout>();
  private readonly realpaths = new Map<string, Promise<string>>();
  /** The content hash each tool file was last run with. */
  private readonly hashes = new Map<string, string>();
  private readonly idleMs: number;
  private readonly maxIdle: number;
  private readonly env: Record<string, string | undefined>;
  private closed = false;

  constructor(options: DenoSandboxOptions = {}) {
    this.idleMs = options.idleMs ?? 60_000;
    this.maxIdle = options.maxIdlePerTool ?? 2;
    this.env = options.env ?? process.env;
  }

  /**
   * Calls the tool's `execute(input, context)` (RYE's format: `execute(params, projectPath)`) and
   * returns its JSON result. `context` holds `projectPath`, `secrets` (the declared ones),
   * `itemId`, `log` and, when the call has one, `traceparent` (W3C trace context). Rejects with a `DirigentError`: `SANDBOX_DENIED` (fatal) when Deno
   * refused a permission, `MEMORY_LIMIT` (fatal) when the heap limit was reached, `HOST_CRASHED`
   * (retryable) when the process died otherwise, `STEP_TIMEOUT` (retryable) or the abort reason
   * after the process group was killed, `TOOL_FAILED` when the tool threw (retryable when the
   * error says so), `MISSING_SECRET` when a declared secret is not available.
   */
  async run(call: DenoToolCall): Promise<unknown> {
    const label = `deno tool ${call.itemId}`;
    if (this.closed) throw cancelled(label, 'the Deno sandbox is closed');
    if (call.signal.aborted) throw abortError(call.signal, label);
    if (!call.meta.hasExecute)
      throw DirigentError.fatal(ErrorCode.INVALID_TOOL, `${label} exports no execute function.`, {
        hint: 'Export execute: export async function execute(input, context) { … }',
      });
    const secrets = this.declaredSecrets(call, label);
    const spec = await this.hostSpec(call);
    const hash = call.meta.hash ?? (await hashFile(call.file));
    const key = JSON.stringify([
      spec.toolFile,
      hash,
      spec.format,
      spec.network,
      spec.memoryMb,
      spec.projectDir,
      spec.readPaths,
      spec.deno,
    ]);
    if (this.closed) throw cancelled(label, 'the Deno sandbox is closed');
    const host = this.acquire(key, spec, hash);
    try {
      const result = await host.call(
        {
          input: call.input,
          secrets,
          projectPath: call.projectDir,
          itemId: call.itemId,
          ...(call.traceparent !== undefined && { traceparent: call.traceparent }),
        },
        {
          timeoutMs: call.timeoutMs,
          signal: call.signal,
          label,
          redact: Object.values(call.secrets),
          ...(call.onLog && { onLog: call.onLog }),
        },
      );
      return call.meta.format === 'rye' ? fromRye(label, result) : result;
    } finally {
      this.release(host);
    }
  }

  /** Kills every host; calls in flight reject with `CANCELLED`. Later calls are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.idleTimers.values()) clearTimeout(timer);
    this.idleTimers.clear();
    this.idle.clear();
    const hosts = [...this.hosts];
    this.hosts.clear();
    await Promise.all(
      hosts.map((h) => h.kill(() => cancelled('The call', 'the Deno sandbox is closed'))),
    );
  }

  /** Number of live host processes, idle or busy. */
  get size(): number {
    return this.hosts.size;
  }

  private declaredSecrets(call: DenoToolCall, label: string): Record<string, string> {
    const out: Record<string, string> = {};
    const missing: string[] = [];
    for (const name of call.meta.requiredSecrets) {
      const value = Object.hasOwn(call.secrets, name) ? call.secrets[name] : undefined;
      if (value === undefined) missing.push(name);
      else out[name] = value;
    }
    if (missing.length > 0) throw missingSecrets(label, missing);
    return out;
  }

  private async hostSpec(call: DenoToolCall): Promise<DenoHostSpec> {
    const projectDir = resolve(call.projectDir);
    const toolFile = resolve(call.file);
    const toolDir = dirname(toolFile);
    const [deno, projectReal, toolDirReal] = await Promise.all([
      resolveDeno(this.env),
      this.realpath(projectDir),
      this.realpath(toolDir),
    ]);
    const root = denoCacheRoot(projectReal, this.env);
    const harness = await harnessFile(root);
    return {
      deno,
      harness,
      denoDir: join(root, 'cache'),
      toolFile,
      format: call.meta.format,
      projectDir,
      // Both the given and the real path: Deno compares the paths a tool uses, as written.
      readPaths: [...new Set([projectDir, projectReal, toolDir, toolDirReal])],
      writePaths: [...new Set([projectDir, projectReal])],
      network: call.meta.network,
      memoryMb: call.meta.limits.memoryMb ?? DEFAULT_MEMORY_MB,
    };
  }

  private realpath(path: string): Promise<string> {
    let real = this.realpaths.get(path);
    if (real === undefined) {
      real = realpath(path).catch(() => path);
      this.realpaths.set(path, real);
    }
    return real;
  }

  private acquire(key: string, spec: DenoHostSpec, hash: string): DenoHost {
    const list = this.idle.get(key);
    while (list !== undefined && list.length > 0) {
      const host = list.pop()!;
      clearTimeout(this.idleTimers.get(host));
      this.idleTimers.delete(host);
      if (host.usable) return host;
      this.drop(host);
    }
    const previous = this.hashes.get(spec.toolFile);
    this.hashes.set(spec.toolFile, hash);
    if (previous !== undefined && previous !== hash) {
      // The tool file changed: hosts of its older content will not be used again.
      for (const [k, hosts] of this.idle) {
        if (hosts[0]?.spec.toolFile !== spec.toolFile) continue;
        for (const h of hosts) this.drop(h);
        this.idle.delete(k);
      }
    }
    const host = new DenoHost(key, spec);
    this.hosts.add(host);
    return host;
  }

  private release(host: DenoHost): void {
    if (this.closed || !host.usable) return this.drop(host);
    const list = this.idle.get(host.key) ?? [];
    if (list.length >= this.maxIdle) return this.drop(host);
    list.push(host);
    this.idle.set(host.key, list);
    const timer = setTimeout(() => {
      this.idleTimers.delete(host);
      const hosts = this.idle.get(host.key);
      const at = hosts?.indexOf(host) ?? -1;
      if (at !== -1) hosts!.splice(at, 1);
      if (hosts?.length === 0) this.idle.delete(host.key);
      this.drop(host);
    }, this.idleMs);
    timer.unref();
    this.idleTimers.set(host, timer);
  }

  /** Forgets `host` and kills its process group, without waiting. */
  private drop(host: DenoHost): void {
    clearTimeout(this.idleTimers.get(host));
    this.idleTimers.delete(host);
    this.hosts.delete(host);
    void host.kill();
  }
}

async function hashFile(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}

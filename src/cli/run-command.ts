import { createInterface } from 'node:readline/promises';
import { resolve } from 'node:path';
import { formatDiagnostic } from '../directive/diagnostics.js';
import { DirectiveLoader } from '../engine/directive-loader.js';
import type { ActiveRun } from '../engine/active-run.js';
import { Engine } from '../engine/engine.js';
import type { EngineObserver } from '../engine/engine-options.js';
import { FileRunStore } from '../engine/file-run-store.js';
import { exitCodeOf, type RunRecord } from '../engine/run-record.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { ItemDispatcher } from '../tools/item-dispatcher.js';
import { parseInputs, parsePayload } from './parse-inputs.js';
import { printOutcome, progressPrinter } from './progress-printer.js';
import { diagnosticsOf } from './validate-command.js';
import { redisUrl } from '../queue/redis-url.js';
import { cliTelemetry } from './cli-telemetry.js';

interface CommonOptions {
  project: string;
  json?: boolean;
  /** Redis URL (`--redis`); `REDIS_URL` otherwise. Without either, runs are embedded. */
  redis?: string;
}
export interface RunOptions extends CommonOptions {
  input: string[];
  inputs?: string;
  interactive: boolean;
  /** With Redis: print the run id at once instead of waiting for the outcome. */
  detach?: boolean;
}

const out = (line: string) => process.stdout.write(line + '\n');

/** The Redis side of the CLI, loaded only when used: an embedded run never pays for BullMQ. */
const remote = () => import('./remote-commands.js');

function makeEngine(opts: CommonOptions): Engine {
  const projectDir = resolve(opts.project);
  const observer: EngineObserver | undefined = opts.json ? undefined : progressPrinter(out);
  const loader = new DirectiveLoader(projectDir);
  const telemetry = cliTelemetry();
  return new Engine({
    projectDir,
    dispatcher: new ItemDispatcher(loader.items, {
      limits: loader.policy.limits,
      ...(telemetry && { telemetry }),
    }),
    loader,
    store: new FileRunStore(projectDir),
    ...(observer && { observer }),
    ...(telemetry && { telemetry }),
  });
}

/** `dirigent run`: 0 completed, 1 failed or cancelled, 3 waiting, 2 invalid directive or inputs. */
export async function runCommand(target: string, opts: RunOptions): Promise<number> {
  if (redisUrl(opts.redis) !== undefined) return (await remote()).remoteRun(target, opts);
  const engine = makeEngine(opts);
  let record: RunRecord;
  // Listening before the run starts: a Ctrl-C that comes while the first step spawns its work
  // must cancel the run, not kill this process and orphan that work.
  const reason = 'Cancelled from the terminal (SIGINT).';
  let run: ActiveRun | undefined;
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
    run?.cancel(reason);
  };
  process.on('SIGINT', onSigint);
  try {
    const inputs = parseInputs(opts.input, opts.inputs);
    const loaded = await engine.loader.loadFile(await engine.loader.resolve(target));
    if (!opts.json)
      for (const w of loaded.compiled.directive.warnings)
        process.stderr.write(formatDiagnostic(w) + '\n');
    run = engine.start(loaded, inputs, { trigger: 'cli' });
    if (interrupted) run.cancel(reason);
    record = await run.settled();
    record = await promptWhileWaiting(engine, record, opts);
  } catch (err) {
    return reportInvalid(err, opts);
  } finally {
    process.off('SIGINT', onSigint);
  }
  return await finish(engine, record, opts);
}

/** `dirigent signal`: resumes a waiting run and prints its outcome. */
export async function signalCommand(
  runId: string,
  name: string,
  opts: CommonOptions & { payload?: string },
): Promise<number> {
  if (redisUrl(opts.redis) !== undefined) return (await remote()).remoteSignal(runId, name, opts);
  const engine = makeEngine(opts);
  try {
    return await finish(engine, await engine.signal(runId, name, parsePayload(opts.payload)), opts);
  } catch (err) {
    return reportInvalid(err, opts);
  }
}

/** `dirigent cancel`: cancels a waiting run. */
export async function cancelCommand(runId: string, opts: CommonOptions): Promise<number> {
  if (redisUrl(opts.redis) !== undefined) return (await remote()).remoteCancel(runId, opts);
  const engine = makeEngine(opts);
  try {
    return await finish(
      engine,
      await engine.cancelRun(runId, 'Cancelled with `dirigent cancel`.'),
      opts,
    );
  } catch (err) {
    return reportInvalid(err, opts);
  }
}

/** Asks the person at the terminal to answer instruction and wait steps, one after another. */
async function promptWhileWaiting(
  engine: Engine,
  record: RunRecord,
  opts: RunOptions,
): Promise<RunRecord> {
  if (opts.json || !opts.interactive || !process.stdin.isTTY) return record;
  let current = record;
  while (current.status === 'waiting' && current.waiting?.[0]) {
    const w = current.waiting[0];
    out(
      w.text
        ? `\nstep "${w.step}":\n${w.text}`
        : `\nstep "${w.step}" waits for signal "${w.signal}".`,
    );
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    const answer = await rl.question('answer (JSON or text) > ');
    rl.close();
    current = await engine.signal(current.runId, w.signal, parsePayload(answer));
  }
  return current;
}

async function finish(engine: Engine, record: RunRecord, opts: CommonOptions): Promise<number> {
  engine.release();
  await engine.drain(); // cancelled work (a process group) is stopped before the process exits
  await engine.dispatcher.close?.(); // warm Python hosts, Deno sandboxes, MCP clients
  return printRecord(record, opts);
}

/** Prints a run record as `run` does (JSON or a summary) and returns the exit status it calls for. */
export function printRecord(record: RunRecord, opts: { json?: boolean }): number {
  if (opts.json) out(JSON.stringify(record));
  else printOutcome(record, out);
  return exitCodeOf(record.status);
}

/** Reports an error that kept the command from running (exit 2; 1 for an internal one). */
export function reportInvalid(err: unknown, opts: { json?: boolean }): number {
  const e = DirigentError.from(err);
  if (opts.json) {
    out(
      JSON.stringify({
        runId: null,
        directive: null,
        status: 'invalid',
        outputs: null,
        steps: [],
        error: { code: e.code, message: e.message, step: null, diagnostics: diagnosticsOf(e) },
      }),
    );
  } else {
    for (const d of diagnosticsOf(e)) process.stderr.write(formatDiagnostic(d) + '\n');
  }
  // Nothing ran because the directive or the call is wrong (2), or because something around it
  // failed (1).
  return e.code === ErrorCode.INTERNAL || e.code === ErrorCode.REDIS_UNAVAILABLE ? 1 : 2;
}

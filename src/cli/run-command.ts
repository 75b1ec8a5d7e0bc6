/**
 * The CLI's run commands (`run`, `signal`, `cancel`, `status`, `runs`) on the operations
 * (`operations/dirigent.ts`): embedded, or on Redis with `--redis` / `REDIS_URL`, with the same
 * output and exit statuses. This face only turns options into requests and results into lines.
 */
import { formatDiagnostic } from '../directive/diagnostics.js';
import { exitCodeOf, type RunRecord, type RunStatus } from '../engine/run-record.js';
import { describeAnswer } from '../directive/answer-spec.js';
import { DirigentError, isDirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { Dirigent } from '../operations/dirigent.js';
import { checkReusePolicy } from '../operations/idempotency.js';
import { parseTags } from '../engine/run-tags.js';
import { redisUrl } from '../redis/redis-url.js';
import { processTelemetry } from '../telemetry/process-telemetry.js';
import { askAnswer } from './answer-prompt.js';
import { checkPriority } from '../engine/run-priority.js';
import { parseInputs, parsePayload } from './parse-inputs.js';
import { printOutcome, progressPrinter } from './progress-printer.js';
import { diagnosticsOf } from '../directive/diagnostics.js';

/** Options every command on a project takes (see `shared-options.ts`). */
export interface CommonOptions {
  /** `--project` (default `$DIRIGENT_PROJECT`, else the current folder). */
  project: string;
  json?: boolean;
  /** Redis URL (`--redis`); `REDIS_URL` otherwise. Without either, runs are embedded. */
  redis?: string;
  /** The deployment's key prefix on Redis (`--prefix`; `$DIRIGENT_PREFIX` otherwise). */
  prefix?: string;
}
/** Options of `dirigent run`. */
export interface RunOptions extends CommonOptions {
  input: string[];
  inputs?: string;
  interactive: boolean;
  /** With Redis: print the run id at once instead of waiting for the outcome (`--detach`). */
  detach?: boolean;
  /** Seconds to wait for the outcome (`--timeout`); unset, the wait has no bound. */
  timeout?: string;
  /** Tags for the run, `name=value` (`--tag`, repeatable). */
  tag?: string[];
  /** One run per key (`--idempotency-key`). */
  idempotencyKey?: string;
  /** With a key whose run failed or was cancelled (`--reuse`): `never` or `failed`. */
  reuse?: string;
  /** 1 to 10 (`--priority`). */
  priority?: string;
}

/**
 * The exit status of a `run` whose `--timeout` passed first: the run had not ended or come to
 * wait (on Redis it goes on; embedded it is cancelled, since nothing else could drive it).
 */
export const EXIT_TIMED_OUT = 4;

/** How long a run on Redis may stay queued with no worker before `run` says so again. */
const NO_WORKER_CHECK_MS = 2000;
const NO_WORKER =
  'No worker is connected: the run waits in the queue until one starts (`dirigent worker`).\n';

const out = (line: string) => process.stdout.write(line + '\n');

/** Errors before anything ran that exit 1 rather than 2 (see {@link reportInvalid}). */
const EXITS_ONE = new Set<string>([
  ErrorCode.INTERNAL,
  ErrorCode.REDIS_UNAVAILABLE,
  ErrorCode.RUN_ENDED,
  ErrorCode.RUN_NOT_REDRIVABLE,
]);

/**
 * `dirigent run`: 0 completed, 1 failed or cancelled, 3 waiting, 2 invalid directive or inputs,
 * {@link EXIT_TIMED_OUT} when `--timeout` passed first.
 */
export function runCommand(target: string, opts: RunOptions): Promise<number> {
  return withDirigent(opts, async (dirigent) => {
    const inputs = parseInputs(opts.input, opts.inputs);
    const tags = parseTags(opts.tag ?? []);
    const timeoutMs = timeoutOf(opts.timeout);
    const loaded = await dirigent.load(target, true);
    if (!opts.json) {
      for (const w of loaded.signatureWarnings ?? []) process.stderr.write(`warning: ${w}\n`);
      for (const w of loaded.compiled.directive.warnings)
        process.stderr.write(formatDiagnostic(w) + '\n');
    }
    // Said on standard error in every output mode: --json keeps standard output for the record.
    const noWorker = dirigent.mode === 'redis' && !(await dirigent.ready()).ok;
    if (noWorker) process.stderr.write(NO_WORKER);
    // Embedded, Ctrl-C cancels the run: its work (a process group) is stopped before this exits.
    // Listening before the run starts: a Ctrl-C while the first step spawns must cancel it too.
    const reason = 'Cancelled from the terminal (SIGINT).';
    let runId: string | undefined;
    let interrupted = false;
    const onSigint = () => {
      interrupted = true;
      if (runId !== undefined) void dirigent.cancel(runId, reason).catch(ignoreCancel);
    };
    if (dirigent.mode === 'embedded') process.on('SIGINT', onSigint);
    try {
      ({ runId } = await dirigent.start({
        directive: target,
        inputs,
        trigger: 'cli',
        allowFile: true,
        ...(opts.idempotencyKey !== undefined && { idempotencyKey: opts.idempotencyKey }),
        ...(tags && { tags }),
        ...(opts.reuse !== undefined && { reuse: checkReusePolicy(opts.reuse) }),
        ...(opts.priority !== undefined && { priority: priorityOption(opts.priority) }),
        ...(!opts.json && { observer: progressPrinter(out) }),
      }));
      if (opts.detach && dirigent.mode === 'redis') {
        out(opts.json ? JSON.stringify({ runId }) : runId);
        return 0;
      }
      if (interrupted) void dirigent.cancel(runId, reason).catch(ignoreCancel);
      const stopWatching =
        dirigent.mode === 'redis' && !noWorker ? sayWhenNoWorker(dirigent) : undefined;
      let record: RunRecord;
      try {
        record = await dirigent.wait(runId, timeoutMs === undefined ? {} : { timeoutMs });
      } finally {
        stopWatching?.();
      }
      if (record.status === 'queued' || record.status === 'running') {
        return timedOut(dirigent, record, timeoutMs ?? 0, opts);
      }
      return printRecord(await promptWhileWaiting(dirigent, record, opts), opts);
    } finally {
      process.off('SIGINT', onSigint);
    }
  });
}

/** `--priority`'s value, checked (`INVALID_REQUEST` for what is not a whole number from 1 to 10). */
export function priorityOption(value: string): number {
  return checkPriority(value.trim() === '' ? value : Number(value));
}

/** `--timeout`'s seconds as milliseconds; a value that is not a positive number is refused. */
function timeoutOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds <= 0) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_REQUEST,
      `--timeout ${JSON.stringify(value)} is not a number of seconds.`,
      {
        hint: 'Give how long to wait for the outcome in seconds, e.g. --timeout 30 or --timeout 0.5.',
      },
    );
  }
  return Math.ceil(seconds * 1000);
}

/**
 * Checks every {@link NO_WORKER_CHECK_MS} whether any worker still takes runs, and says so once
 * when none does (workers that stopped after the run was sent). Returns how to stop checking.
 */
function sayWhenNoWorker(dirigent: Dirigent): () => void {
  const timer = setInterval(() => {
    void dirigent.ready().then(
      ({ ok }) => {
        if (ok) return;
        clearInterval(timer);
        process.stderr.write(NO_WORKER);
      },
      () => undefined,
    );
  }, NO_WORKER_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The run did not end or come to wait within `--timeout`: on Redis it goes on, and its record is
 * printed as it stands; embedded, it is cancelled (no other process could drive it) and its
 * record says so. Exits {@link EXIT_TIMED_OUT} either way.
 */
async function timedOut(
  dirigent: Dirigent,
  record: RunRecord,
  timeoutMs: number,
  opts: RunOptions,
): Promise<number> {
  const seconds = timeoutMs / 1000;
  const final =
    dirigent.mode === 'embedded'
      ? await dirigent
          .cancel(record.runId, `Cancelled: --timeout ${seconds} s passed.`)
          // It ended in the moment between the wait and the cancel: its record says how.
          .catch(() => dirigent.get(record.runId))
      : record;
  if (opts.json) out(JSON.stringify(final));
  else printOutcome(final, out);
  process.stderr.write(
    dirigent.mode === 'embedded'
      ? `The run did not end within --timeout ${seconds} s and was cancelled.\n`
      : `The run did not end within --timeout ${seconds} s; it goes on (\`dirigent status ${record.runId}\`).\n`,
  );
  return EXIT_TIMED_OUT;
}

/** `dirigent signal`: resumes a waiting run and prints its outcome as `run` does. */
export function signalCommand(
  runId: string,
  name: string,
  opts: CommonOptions & {
    /** `--payload`: the waiting step's result (JSON, or else plain text). */
    payload?: string;
  },
): Promise<number> {
  return withDirigent(opts, async (dirigent) =>
    printRecord(
      await dirigent.signal(runId, name, parsePayload(opts.payload), {
        ...(!opts.json && { observer: progressPrinter(out) }),
      }),
      opts,
    ),
  );
}

/**
 * `dirigent cancel`: cancels a run (embedded: a waiting one) and prints its outcome, once the
 * compensations of its completed steps have run (none with `--no-compensate`).
 */
export function cancelCommand(
  runId: string,
  opts: CommonOptions & { compensate?: boolean },
): Promise<number> {
  return withDirigent(opts, async (dirigent) =>
    printRecord(
      await dirigent.cancel(runId, 'Cancelled with `dirigent cancel`.', {
        ...(opts.compensate === false && { compensate: false }),
      }),
      opts,
    ),
  );
}

/** `dirigent status <runId>`: the run's record; exit 0 whatever its status. */
export function statusCommand(runId: string, opts: CommonOptions): Promise<number> {
  return withDirigent(opts, async (dirigent) => {
    const record = await dirigent.get(runId);
    if (opts.json) out(JSON.stringify(record));
    else printOutcome(record, out);
    return 0;
  });
}

/** `dirigent runs [--status s] [--directive d] [--limit n]`: run records, newest first. */
export function runsCommand(
  opts: CommonOptions & { status?: string; directive?: string; limit?: string; tag?: string[] },
): Promise<number> {
  return withDirigent(opts, async (dirigent) => {
    const tags = parseTags(opts.tag ?? []);
    const { runs } = await dirigent.list({
      ...(opts.status !== undefined && { status: opts.status as RunStatus }),
      ...(opts.directive !== undefined && { directive: opts.directive }),
      ...(tags && { tags }),
      ...(opts.limit !== undefined && { limit: Number(opts.limit) }),
    });
    if (opts.json) out(JSON.stringify(runs));
    else
      for (const r of runs)
        out(
          `${r.runId}  ${r.status.padEnd(9)}  ${r.directive}  ${new Date(r.startedAt).toISOString()}${tagsText(r.tags)}${r.summary ? `  (${r.summary})` : ''}`,
        );
    return 0;
  });
}

/** A run's tags as a list line ends: `  customer=c7 region=eu`, or nothing. */
function tagsText(tags: Record<string, string> | undefined): string {
  if (tags === undefined) return '';
  return `  ${Object.entries(tags)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ')}`;
}

/**
 * Opens the project (embedded, or on Redis), does `work`, and closes it: embedded, stopped work
 * has stopped and warm tool processes are gone before the command exits. An error that kept the
 * command from running is reported as {@link reportInvalid} says.
 */
export function withDirigent(
  opts: CommonOptions,
  work: (dirigent: Dirigent) => Promise<number>,
): Promise<number> {
  return withOpened(opts, work, true);
}

/**
 * {@link withDirigent} for a command that reads only the project's items (`search`, `load`,
 * `sign`): the project is opened embedded, whatever `$REDIS_URL` says, so the command never needs
 * a Redis that may not answer.
 */
export function withProjectItems(
  opts: CommonOptions,
  work: (dirigent: Dirigent) => Promise<number>,
): Promise<number> {
  return withOpened(opts, work, false);
}

async function withOpened(
  opts: CommonOptions,
  work: (dirigent: Dirigent) => Promise<number>,
  deployment: boolean,
): Promise<number> {
  let dirigent: Dirigent;
  try {
    const url = deployment ? redisUrl(opts.redis) : undefined;
    const telemetry = processTelemetry();
    dirigent = await Dirigent.open({
      project: opts.project,
      ...(url !== undefined && { redis: url }),
      ...(opts.prefix !== undefined && { prefix: opts.prefix }),
      ...(telemetry && { telemetry }),
    });
  } catch (err) {
    return reportInvalid(err, opts);
  }
  try {
    return await work(dirigent);
  } catch (err) {
    return reportInvalid(err, opts);
  } finally {
    await dirigent.close();
  }
}

/**
 * Asks the person at the terminal to answer instruction and wait steps, one after another, each
 * as its `<answer>`s declare it (see `answer-prompt.ts`); an answer the run refuses
 * (`INVALID_PAYLOAD`) is said and asked again.
 */
async function promptWhileWaiting(
  dirigent: Dirigent,
  record: RunRecord,
  opts: RunOptions,
): Promise<RunRecord> {
  // Standard input is looked at only for a run that waits: Node makes it on first use.
  if (record.status !== 'waiting' || opts.json || !opts.interactive || !process.stdin.isTTY)
    return record;
  // readline only for a prompt: most runs never ask.
  const { createInterface } = await import('node:readline/promises');
  let current = record;
  while (current.status === 'waiting' && current.waiting?.[0]) {
    const w = current.waiting[0];
    out(
      w.text
        ? `\nstep "${w.step}":\n${w.text}`
        : `\nstep "${w.step}" waits for signal "${w.signal}".`,
    );
    if (w.answer !== undefined) out(`answer: ${describeAnswer(w.answer)}`);
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    let payload: unknown;
    try {
      payload = await askAnswer(w.answer, (q) => rl.question(q), out);
    } finally {
      rl.close();
    }
    try {
      current = await dirigent.signal(current.runId, w.signal, payload, {
        observer: progressPrinter(out),
      });
    } catch (err) {
      if (!isDirigentError(err, ErrorCode.INVALID_PAYLOAD)) throw err;
      out(`${err.message}\n  hint: ${err.hint ?? ''}`);
    }
  }
  return current;
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
  // failed, or the run it names has ended already (1, as a run that ended failed or cancelled).
  return EXITS_ONE.has(e.code) ? 1 : 2;
}

/**
 * A cancel asked from Ctrl-C that failed (the run ended meanwhile, Redis went away): the wait that
 * follows reports how the run stands, which is what the person at the terminal needs.
 */
function ignoreCancel(): void {}

/**
 * A batch: one directive over many inputs, one run per input, a bounded number under way at once,
 * one result per input. Every input's run has the idempotency key `batch:<batch id>:<line>`, so a
 * batch interrupted anywhere (Ctrl-C, a crash, a lost connection) and run again starts no input
 * twice: an input whose run exists is waited for, not started (on Redis its run went on on the
 * workers meanwhile). Inputs with a result already (the results of the previous attempt) are
 * skipped. Results come in input order, or as runs end with `ordered: false`; memory is bounded by
 * the window of inputs under way, however many there are.
 */
import type { RunRecord } from '../engine/run-record.js';
import { DirigentError, type SerializedError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { BatchCounts } from './batch-progress.js';
import type { StartedRun, StartRequest } from '../operations/start-request.js';

export type { BatchCounts };

/** What a batch's runs are started on: the operations' load, start and wait (a `Dirigent`). */
export interface BatchRunner {
  /** Reads, verifies and compiles a directive (or throws why it cannot run). */
  load(directive: string, allowFile?: boolean): Promise<unknown>;
  start(request: StartRequest): Promise<StartedRun>;
  /** The run's record once it ends or waits. */
  wait(runId: string): Promise<RunRecord>;
}

/** One input of a batch, as read from its file. */
export interface BatchInput {
  /** 1-based line (JSONL) or record line (CSV) of the input. */
  line: number;
  inputs?: Record<string, unknown>;
  /** Why the line could not be read: reported as its result, without a run. */
  error?: DirigentError;
}

/** The result of one input. */
export interface BatchResult {
  line: number;
  input?: Record<string, unknown>;
  runId?: string;
  /** The run's status, or `invalid` when no run started (a bad line, invalid inputs). */
  status: RunRecord['status'] | 'invalid';
  outputs?: Record<string, unknown> | null;
  error?: Pick<SerializedError, 'code' | 'message'> & { step?: string | null };
}

/** What {@link runBatch} takes. */
export interface BatchRequest {
  batchId: string;
  /** The directive's item id (or, with `allowFile`, a file: the CLI's person names files). */
  directive: string;
  allowFile?: boolean;
  inputs: AsyncIterable<BatchInput>;
  /** Runs under way at once (default 8). */
  concurrency?: number;
  /** Results in input order (default true), else as runs end. */
  ordered?: boolean;
  /** At most this many inputs (read ones, skipped included). */
  limit?: number;
  /**
   * How an earlier attempt left an input: `done` (a result that stands: skip it), `failed` (a
   * failed result: skip it, unless retrying failed ones), or undefined (no result yet).
   */
  earlier?: (line: number) => { state: 'done' | 'failed'; retries: number } | undefined;
  /** Run again the inputs whose earlier result failed (with a new key: a new run). */
  retryFailed?: boolean;
  /** Where results go; awaited, so a slow sink slows the batch instead of piling results up. */
  onResult: (result: BatchResult) => void | Promise<void>;
  onCounts?: (counts: BatchCounts) => void;
  /** Stops taking new inputs; runs under way are waited for (embedded) or left to their workers. */
  signal?: AbortSignal;
}

/** How a batch ended. */
export interface BatchOutcome {
  counts: BatchCounts;
  /** True when every input has a result (none left for a later attempt). */
  finished: boolean;
  /** Why the batch stopped early, when it did (not an input's own failure). */
  stoppedBy?: DirigentError;
}

/** Errors that are an input's own fault: its result, not the batch's end. */
const INPUT_ERRORS: ReadonlySet<string> = new Set([
  ErrorCode.INVALID_INPUTS,
  ErrorCode.INPUT_TOO_LARGE,
  ErrorCode.IDEMPOTENCY_CONFLICT,
]);

/** The idempotency key of an input's run (`retries`: how often a failed input was run again). */
export function batchRunKey(batchId: string, line: number, retries = 0): string {
  return `batch:${batchId}:${line}${retries > 0 ? `:retry${retries}` : ''}`;
}

/** Runs the batch (see the module comment). Rejects only when it cannot start at all. */
export async function runBatch(
  dirigent: BatchRunner,
  request: BatchRequest,
): Promise<BatchOutcome> {
  // Read first: a directive that does not exist or does not parse stops the batch before a line.
  await dirigent.load(request.directive, request.allowFile);
  const concurrency = Math.max(1, request.concurrency ?? 8);
  const ordered = request.ordered ?? true;
  // In order, an input far ahead of the oldest unfinished one waits, so buffered results stay bounded.
  const window = ordered ? Math.max(concurrency * 16, 1024) : concurrency;
  const counts: BatchCounts = {
    read: 0,
    done: 0,
    completed: 0,
    failed: 0,
    waiting: 0,
    running: 0,
    skipped: 0,
  };
  const tell = () => request.onCounts?.({ ...counts });
  let stoppedBy: DirigentError | undefined;
  const stop = new AbortController();
  const halt = (e: DirigentError) => {
    stoppedBy ??= e;
    stop.abort(e);
  };
  request.signal?.addEventListener('abort', () => stop.abort(request.signal?.reason), {
    once: true,
  });

  // Results in order: those that ended early wait here for the ones before them.
  const pending = new Map<number, BatchResult | undefined>();
  const order: number[] = [];
  let writing: Promise<void> = Promise.resolve();
  const emit = (result: BatchResult) => {
    writing = writing.then(() => request.onResult(result));
    return writing;
  };
  const flush = () => {
    while (order.length > 0) {
      const line = order[0]!;
      const result = pending.get(line);
      if (result === undefined) return;
      order.shift();
      pending.delete(line);
      void emit(result);
    }
  };
  const settle = async (line: number, result: BatchResult) => {
    counts.done++;
    if (result.status === 'completed') counts.completed++;
    else if (result.status === 'waiting') counts.waiting = (counts.waiting ?? 0) + 1;
    else counts.failed++;
    tell();
    if (!ordered) return emit(result);
    pending.set(line, result);
    flush();
    return writing;
  };

  const under = new Set<Promise<void>>();
  const one = async (input: BatchInput, retries: number) => {
    counts.running++;
    tell();
    try {
      await settle(input.line, await resultOf(dirigent, request, input, retries));
    } catch (err) {
      // Not the input's fault (Redis went away, the store failed): no result; a later attempt
      // takes the input up again.
      halt(DirigentError.from(err));
      if (ordered) pending.delete(input.line);
      const at = order.indexOf(input.line);
      if (at >= 0) order.splice(at, 1);
    } finally {
      counts.running--;
      tell();
    }
  };

  for await (const input of request.inputs) {
    if (stop.signal.aborted) break;
    if (request.limit !== undefined && counts.read >= request.limit) break;
    counts.read++;
    const before = request.earlier?.(input.line);
    const retry = before?.state === 'failed' && request.retryFailed === true;
    if (before !== undefined && !retry) {
      counts.skipped++;
      continue;
    }
    while (
      under.size >= concurrency ||
      (ordered && order.length > 0 && input.line - order[0]! > window && under.size > 0)
    ) {
      await Promise.race(under);
      if (stop.signal.aborted) break;
    }
    if (stop.signal.aborted) break;
    if (ordered) {
      order.push(input.line);
      pending.set(input.line, undefined);
    }
    const work = one(input, retry ? before.retries + 1 : 0).finally(() => under.delete(work));
    under.add(work);
  }
  await Promise.all(under);
  flush();
  await writing;
  tell();
  return {
    counts: { ...counts },
    finished: !stop.signal.aborted,
    ...(stoppedBy && { stoppedBy }),
  };
}

/** The result of one input: its run's record, or why it has none. */
async function resultOf(
  dirigent: BatchRunner,
  request: BatchRequest,
  input: BatchInput,
  retries: number,
): Promise<BatchResult> {
  const { line } = input;
  if (input.error !== undefined || input.inputs === undefined)
    return { line, status: 'invalid', error: brief(input.error ?? missing(line)) };
  let runId: string;
  try {
    ({ runId } = await dirigent.start({
      directive: request.directive,
      ...(request.allowFile !== undefined && { allowFile: request.allowFile }),
      inputs: input.inputs,
      idempotencyKey: batchRunKey(request.batchId, line, retries),
      trigger: 'batch',
    }));
  } catch (err) {
    const e = DirigentError.from(err);
    if (!INPUT_ERRORS.has(e.code)) throw e;
    return { line, input: input.inputs, status: 'invalid', error: brief(e) };
  }
  const record = await dirigent.wait(runId);
  return {
    line,
    input: input.inputs,
    runId,
    status: record.status,
    ...(record.status === 'completed'
      ? { outputs: record.outputs }
      : record.error && { error: { ...brief(record.error), step: record.error.step } }),
  };
}

function brief(e: { code: string; message: string }): { code: string; message: string } {
  return { code: e.code, message: e.message };
}

function missing(line: number): DirigentError {
  return DirigentError.fatal(ErrorCode.INVALID_INPUTS, `Line ${line} has no inputs.`);
}

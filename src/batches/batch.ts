/**
 * A batch as every face runs it (the CLI's `dirigent batch`, the HTTP API, a library): the inputs
 * read as a stream from a JSONL or CSV file (or any stream), one run per input through
 * {@link runBatch}, one result line per input appended to the results file, and the batch's state in
 * the project (batch-store.ts), so that the same batch run again resumes where it stopped.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { once } from 'node:events';
import { readInputRecords, type InputRecord } from '../input-records/read-input-records.js';
import { ErrorTally } from './error-tally.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import {
  batchDir,
  batchIdOf,
  checkBatchId,
  readBatchMeta,
  readEarlier,
  writeBatchMeta,
  type BatchMeta,
} from './batch-store.js';
import {
  runBatch,
  type BatchCounts,
  type BatchOutcome,
  type BatchResult,
  type BatchRunner,
} from './batch-run.js';
import { processAlive } from '../runtimes/process-alive.js';

/** Where a batch runs: a project, embedded or on Redis, and its operations (a `Dirigent`). */
export interface BatchHost extends BatchRunner {
  readonly projectDir: string;
  readonly mode: 'embedded' | 'redis';
}

/** What starts (or resumes) a batch. */
export interface BatchOptions {
  /** The directive's item id (a file too with `allowFile`). */
  directive: string;
  allowFile?: boolean;
  /** The inputs: a JSONL or CSV file, `-` for standard input, or a stream of JSONL or CSV. */
  inputs: string | NodeJS.ReadableStream;
  /** Default: from the file's extension (`.csv`), else JSONL. */
  format?: 'jsonl' | 'csv';
  /** CSV header → input name. */
  map?: Record<string, string>;
  /** The results file (default `.dirigent/batches/<id>/results.jsonl`). */
  out?: string;
  /** Runs under way at once (default 8). */
  concurrency?: number;
  /** Results in input order (default) or as runs end. */
  ordered?: boolean;
  limit?: number;
  retryFailed?: boolean;
  /** Default: derived from the directive and the inputs file (the same command resumes). */
  batchId?: string;
  onCounts?: (counts: BatchCounts, progress: { read: number; total?: number }) => void;
  signal?: AbortSignal;
}

/** How a batch attempt ended, for a summary. */
export interface BatchReport {
  meta: BatchMeta;
  outcome: BatchOutcome;
  /** Inputs with a result from earlier attempts (skipped this time, but for failed ones retried). */
  earlier: { done: number; failed: number };
  /** Whether this attempt ran the failed inputs again. */
  retried: boolean;
  topErrors: ReturnType<ErrorTally['top']>;
  elapsedMs: number;
}

/** Runs (or resumes) a batch; see the module comment. */
export async function runBatchFile(
  dirigent: BatchHost,
  options: BatchOptions,
): Promise<BatchReport> {
  const started = Date.now();
  const source = typeof options.inputs === 'string' ? options.inputs : '-';
  const inputsPath = source === '-' ? '-' : resolve(source);
  const batchId = options.batchId ?? (await batchIdOf(options.directive, inputsPath));
  checkBatchId(batchId);
  const project = dirigent.projectDir;
  const before = await readBatchMeta(project, batchId);
  if (before?.state === 'running' && before.pid !== process.pid && processAlive(before.pid))
    throw DirigentError.fatal(
      ErrorCode.INVALID_REQUEST,
      `Batch ${batchId} is running already, in process ${before.pid}.`,
      { hint: `Watch it with \`dirigent batch status ${batchId}\`, or stop that process first.` },
    );
  const out = resolve(
    options.out ?? before?.out ?? join(batchDir(project, batchId), 'results.jsonl'),
  );
  const meta: BatchMeta = {
    batchId,
    directive: options.directive,
    inputs: inputsPath,
    ...(options.format !== undefined && { format: options.format }),
    ...(options.map !== undefined && { map: options.map }),
    out,
    ordered: options.ordered ?? true,
    concurrency: options.concurrency ?? 8,
    mode: dirigent.mode,
    createdAt: before?.createdAt ?? started,
    updatedAt: started,
    state: 'running',
    pid: process.pid,
  };
  // Read the directive before anything is written: a batch that cannot start leaves no trace.
  await dirigent.load(options.directive, options.allowFile);
  const earlier = await readEarlier(out);
  await writeBatchMeta(project, meta);
  await mkdir(dirname(out), { recursive: true });
  const results = createWriteStream(out, { flags: 'a' });
  const tally = new ErrorTally();
  const records = readInputRecords(options.inputs, {
    ...(options.format !== undefined && { format: options.format }),
    ...(options.map !== undefined && { map: options.map }),
  });
  let outcome: BatchOutcome;
  let lastSave = 0;
  let unsaved: unknown;
  try {
    outcome = await runBatch(dirigent, {
      batchId,
      directive: options.directive,
      ...(options.allowFile !== undefined && { allowFile: options.allowFile }),
      inputs: records as AsyncIterable<InputRecord>,
      concurrency: meta.concurrency,
      ordered: meta.ordered,
      ...(options.limit !== undefined && { limit: options.limit }),
      earlier: (line) => earlier.get(line),
      ...(options.retryFailed !== undefined && { retryFailed: options.retryFailed }),
      ...(options.signal && { signal: options.signal }),
      onResult: (r) => {
        if (r.error !== undefined) tally.add(r.line, r.error);
        return write(results, r);
      },
      onCounts: (counts) => {
        options.onCounts?.(counts, progressOf(records));
        // The state on disk follows, now and then, for `dirigent batch status`.
        if (Date.now() - lastSave > 1000) {
          lastSave = Date.now();
          void writeBatchMeta(project, { ...meta, updatedAt: lastSave, counts }).catch(() => {
            /* Best effort: the next save, and the last one (awaited), write the state again. */
          });
        }
      },
    });
  } finally {
    results.end();
    // A write that failed on its way to disk: the results are not all saved, which must not
    // pass for a finished batch (an error of the run itself, thrown above, goes first).
    await once(results, 'close').catch((err: unknown) => (unsaved = err));
  }
  if (unsaved !== undefined) throw unsaved;
  const final: BatchMeta = {
    ...meta,
    updatedAt: Date.now(),
    state: outcome.finished ? 'finished' : 'stopped',
    counts: outcome.counts,
  };
  delete final.pid;
  await writeBatchMeta(project, final);
  return {
    meta: final,
    outcome,
    earlier: { done: earlier.done, failed: earlier.failed },
    retried: options.retryFailed === true,
    topErrors: tally.top(),
    elapsedMs: Date.now() - started,
  };
}

/** Resumes a batch by id, with the options it was started with (see `batch.json`). */
export async function resumeBatch(
  dirigent: BatchHost,
  batchId: string,
  options: Pick<BatchOptions, 'retryFailed' | 'onCounts' | 'signal' | 'concurrency'> = {},
): Promise<BatchReport> {
  const meta = await readBatchMeta(dirigent.projectDir, batchId);
  if (meta === undefined)
    throw DirigentError.fatal(ErrorCode.UNKNOWN_BATCH, `No batch ${batchId} in this project.`, {
      hint: 'Batches are kept in <project>/.dirigent/batches/; start one with `dirigent batch`.',
    });
  if (meta.inputs === '-')
    throw DirigentError.fatal(
      ErrorCode.INVALID_REQUEST,
      `Batch ${batchId} read its inputs from standard input: run it again the same way, with --id ${batchId}.`,
    );
  return runBatchFile(dirigent, {
    directive: meta.directive,
    allowFile: true,
    inputs: meta.inputs,
    ...(meta.format !== undefined && { format: meta.format }),
    ...(meta.map !== undefined && { map: meta.map }),
    out: meta.out,
    concurrency: options.concurrency ?? meta.concurrency,
    ordered: meta.ordered,
    batchId,
    ...(options.retryFailed !== undefined && { retryFailed: options.retryFailed }),
    ...(options.onCounts && { onCounts: options.onCounts }),
    ...(options.signal && { signal: options.signal }),
  });
}

/** How a batch stands: its description and state, and its results so far. */
export interface BatchStatus extends Omit<BatchMeta, 'state'> {
  /** `running` only while its process lives; a batch whose process died reads `stopped`. */
  state: BatchMeta['state'];
  results: { done: number; failed: number };
}

/** A batch's status (`INVALID_REQUEST` for a batch the project does not have). */
export async function batchStatus(projectDir: string, batchId: string): Promise<BatchStatus> {
  const meta = await readBatchMeta(projectDir, batchId);
  if (meta === undefined)
    throw DirigentError.fatal(ErrorCode.UNKNOWN_BATCH, `No batch ${batchId} in this project.`, {
      hint: 'Batches are kept in <project>/.dirigent/batches/; start one with `dirigent batch` or POST /v1/batches.',
    });
  const earlier = await readEarlier(meta.out);
  const alive = meta.state === 'running' && processAlive(meta.pid);
  return {
    ...meta,
    state: meta.state === 'running' && !alive ? 'stopped' : meta.state,
    results: { done: earlier.done, failed: earlier.failed },
  };
}

/** Appends one result line, waiting when the file's buffer is full. */
async function write(stream: WriteStream, result: BatchResult): Promise<void> {
  if (!stream.write(`${JSON.stringify(result)}\n`)) await once(stream, 'drain');
}

/** How far the reader has got, when it can say. */
function progressOf(records: unknown): { read: number; total?: number } {
  const r = records as { bytesRead?: number; totalBytes?: number };
  return { read: r.bytesRead ?? 0, ...(r.totalBytes !== undefined && { total: r.totalBytes }) };
}

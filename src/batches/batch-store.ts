/**
 * Where a batch keeps what lets it resume: `.dirigent/batches/<id>/batch.json` in the project (what
 * the batch is: directive, inputs, results file, options; and how it stands), and its results, one
 * JSON line per input, in the results file (`--out`, or `results.jsonl` beside `batch.json`).
 * The results are the truth: a batch run again reads them to know which inputs are done.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { BatchCounts, BatchResult } from './batch-run.js';
import { fileNotFound } from '../errors/file-errors.js';

/** A batch's description and state, as `batch.json` holds it. */
export interface BatchMeta {
  batchId: string;
  directive: string;
  /** The inputs file (absolute), or `-` for standard input. */
  inputs: string;
  format?: 'jsonl' | 'csv';
  map?: Record<string, string>;
  /** The results file (absolute). */
  out: string;
  ordered: boolean;
  concurrency: number;
  /** Where runs run: `embedded`, or the Redis deployment's prefix. */
  mode: 'embedded' | 'redis';
  createdAt: number;
  updatedAt: number;
  /** `running` while a process works on it (its `pid`), else how the last attempt ended. */
  state: 'running' | 'finished' | 'stopped';
  pid?: number;
  counts?: BatchCounts;
}

/** How an earlier attempt left each input (see {@link readEarlier}). */
export interface EarlierResults {
  get(line: number): { state: 'done' | 'failed'; retries: number } | undefined;
  /** Inputs with a result, failed ones among them. */
  readonly done: number;
  readonly failed: number;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** The folder of a batch's state in a project. */
export function batchDir(projectDir: string, batchId: string): string {
  checkBatchId(batchId);
  return join(projectDir, '.dirigent', 'batches', batchId);
}

/** Refuses an id that is not one (`INVALID_REQUEST`). */
export function checkBatchId(batchId: string): void {
  if (!ID.test(batchId))
    throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `"${batchId}" is not a batch id.`, {
      hint: 'Batch ids are letters, digits, _ and -, up to 64 characters.',
    });
}

/**
 * The id of a batch of `directive` over the file `inputs`: the same command over the same file
 * names the same batch (and so resumes it); another file, or the file changed, names another.
 * Standard input has no name: its batches get a random id unless given one.
 */
export async function batchIdOf(directive: string, inputs: string): Promise<string> {
  if (inputs === '-') return randomBytes(8).toString('hex');
  const path = resolve(inputs);
  const st = await stat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
    throw fileNotFound(`The inputs file ${path}`, {
      path,
      hint: 'Give --inputs a JSONL or CSV file, or - for standard input.',
      cause: err,
    });
  });
  const head = Buffer.alloc(Math.min(st.size, 65_536));
  const fh = await open(path, 'r');
  try {
    await fh.read(head, 0, head.length, 0);
  } finally {
    await fh.close();
  }
  return createHash('sha256')
    .update(`${directive}\0${path}\0${st.size}\0${st.mtimeMs}\0`)
    .update(head)
    .digest('hex')
    .slice(0, 16);
}

/** A batch's `batch.json`, or undefined when there is none. */
export async function readBatchMeta(
  projectDir: string,
  batchId: string,
): Promise<BatchMeta | undefined> {
  try {
    return JSON.parse(
      await readFile(join(batchDir(projectDir, batchId), 'batch.json'), 'utf8'),
    ) as BatchMeta;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Writes a batch's `batch.json` atomically (a reader never sees half of it); writes of one batch
 * from this process are applied in call order.
 */
export function writeBatchMeta(projectDir: string, meta: BatchMeta): Promise<void> {
  const dir = batchDir(projectDir, meta.batchId);
  const previous = writes.get(dir) ?? Promise.resolve();
  const write = previous
    .catch(() => {
      /* The caller of that write heard its failure; this one goes ahead all the same. */
    })
    .then(async () => {
      await mkdir(dir, { recursive: true });
      const file = join(dir, 'batch.json');
      const tmp = `${file}.${process.pid}.${++written}.tmp`;
      await writeFile(tmp, JSON.stringify(meta, null, 2));
      await rename(tmp, file);
    });
  writes.set(dir, write);
  void write
    .finally(() => {
      if (writes.get(dir) === write) writes.delete(dir);
    })
    .catch(() => {
      /* The caller awaits `write` and hears its failure; this only forgets it. */
    });
  return write;
}

const writes = new Map<string, Promise<void>>();
let written = 0;

/**
 * Reads the results an earlier attempt wrote: per input, whether its result stands or failed, and
 * how often it was run again. Memory is a byte per line, not a result each. A last line cut short
 * (the process died while writing it) is cut off, so new results start on a line of their own.
 */
export async function readEarlier(resultsFile: string): Promise<EarlierResults> {
  let states = new Uint8Array(1024); // 0 none, 1 done, 2 failed
  const retries = new Map<number, number>();
  let done = 0;
  let failed = 0;
  const size = await stat(resultsFile).then(
    (s) => s.size,
    () => -1,
  );
  if (size > 0) {
    await cutPartialLine(resultsFile, size);
    const lines = createInterface({ input: createReadStream(resultsFile), crlfDelay: Infinity });
    for await (const text of lines) {
      if (text === '') continue;
      let r: Pick<BatchResult, 'line' | 'status'>;
      try {
        r = JSON.parse(text) as BatchResult;
      } catch {
        continue;
      }
      if (!Number.isInteger(r.line) || r.line < 1) continue;
      while (r.line >= states.length) {
        const bigger = new Uint8Array(states.length * 2);
        bigger.set(states);
        states = bigger;
      }
      const before = states[r.line]!;
      if (before === 2) retries.set(r.line, (retries.get(r.line) ?? 0) + 1);
      const now = r.status === 'completed' || r.status === 'waiting' ? 1 : 2;
      if (before === 0) done++;
      if (before === 2) failed--;
      if (now === 2) failed++;
      states[r.line] = now;
    }
  }
  return {
    get(line) {
      const s = line < states.length ? states[line] : 0;
      if (s === 0 || s === undefined) return undefined;
      return { state: s === 1 ? 'done' : 'failed', retries: retries.get(line) ?? 0 };
    },
    done,
    failed,
  };
}

/** Cuts a file back to its last complete line. */
async function cutPartialLine(file: string, size: number): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    const tail = Buffer.alloc(Math.min(size, 1 << 20));
    await fh.read(tail, 0, tail.length, size - tail.length);
    if (tail[tail.length - 1] === 0x0a) return;
    const last = tail.lastIndexOf(0x0a);
    await fh.truncate(last < 0 ? size - tail.length : size - tail.length + last + 1);
  } finally {
    await fh.close();
  }
}

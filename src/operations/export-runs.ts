/**
 * Exporting ended runs as JSON lines, before their retention removes them: one object per run,
 * `{"runId", "record", "inputs", "outputs", "steps"}` (the record, the inputs it was started with,
 * its outputs, and each step's latest pass with its result), in list order (newest first).
 *
 * Streaming: the runs are read a page at a time (`RunFilter`'s cursor), each page's lines written
 * with one append before the next page is read; only the ids already in the file are held.
 *
 * Resumable: the file is its own record of what was written. Run again with the same file, an
 * export reads the ids of the runs the file holds and appends only the others. A line is written
 * with its newline in one append, so an export killed mid-write leaves at most a last line without
 * its newline: the next export cuts it off and writes that run again. A file with a line no export
 * wrote is refused rather than appended to.
 */
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { StepRecord } from '../compiler/run-context.js';
import { hasEnded, type RunRecord } from '../engine/run-record.js';
import type { StoredRun } from '../engine/run-store.js';
import { cannotWriteExport, exportNeedsEnded, notAnExport } from '../errors/export-errors.js';
import { checkRunFilter, type RunFilter, type RunPage } from '../run-backend/run-filter.js';

/** Which runs an export writes: a run filter without its page. Only ended runs are written. */
export type ExportFilter = Omit<RunFilter, 'limit' | 'cursor'>;

/** What an export asks. */
export interface ExportRequest {
  filter?: ExportFilter;
  /** The JSON Lines file written, created or gone on (relative: to the current folder). */
  out: string;
  /** Runs read per page (default 100, at most 1000). */
  pageSize?: number;
  /** Told after each page written. */
  onProgress?: (report: ExportReport) => void;
}

/** What an export did. */
export interface ExportReport {
  /** The file, resolved. */
  file: string;
  /** Runs written by this export. */
  written: number;
  /** Ended runs the filter matched that the file held already (an earlier, interrupted export). */
  skipped: number;
  /** Runs the filter matched that have not ended: not written (run it again once they end). */
  notEnded: number;
  /** Whether a half-written last line, left by an export that was killed, was cut off. */
  repaired: boolean;
}

/** One line of an export. */
export interface ExportedRun {
  runId: string;
  record: RunRecord;
  /** The inputs the run was started with (validated), or null when the store holds none. */
  inputs: Record<string, unknown> | null;
  outputs: Record<string, unknown> | null;
  /** Each step's latest pass, by step name: status, result, error, attempts, times. */
  steps: Record<string, StepRecord>;
}

/** What an export reads runs from (`Dirigent`'s list and its backend's stored runs). */
export interface ExportSource {
  list(filter: RunFilter): Promise<RunPage>;
  stored(runId: string): Promise<StoredRun | undefined>;
}

/** The default {@link ExportRequest.pageSize}. */
export const EXPORT_PAGE = 100;

/** How a line of an export begins: the run's id first, so that going on reads only that. */
const LINE_START = /^\{"runId":"([A-Za-z0-9_-]+)"/;

/** See the module comment. */
export async function exportRuns(
  source: ExportSource,
  request: ExportRequest,
): Promise<ExportReport> {
  const filter = request.filter ?? {};
  if (filter.status !== undefined && !hasEnded(filter.status))
    throw exportNeedsEnded(filter.status);
  const limit = request.pageSize ?? EXPORT_PAGE;
  checkRunFilter({ ...filter, limit });
  const file = resolve(request.out);
  const fh = await openExport(request.out, file);
  try {
    const repaired = await cutHalfLine(fh);
    const have = await idsIn(request.out, file);
    const report: ExportReport = { file, written: 0, skipped: 0, notEnded: 0, repaired };
    let cursor: string | undefined;
    do {
      const page = await source.list({ ...filter, limit, ...(cursor !== undefined && { cursor }) });
      const wanted: string[] = [];
      for (const listed of page.runs) {
        if (!hasEnded(listed.status)) report.notEnded++;
        else if (have.has(listed.runId)) report.skipped++;
        else wanted.push(listed.runId);
      }
      // Read together (one page at most), written in list order.
      const runs = await Promise.all(wanted.map((runId) => source.stored(runId)));
      const lines: string[] = [];
      for (const stored of runs) {
        // Gone since it was listed (its retention ended), or redriven meanwhile: not written.
        if (stored === undefined || !hasEnded(stored.record.status)) continue;
        lines.push(JSON.stringify(exported(stored)) + '\n');
        have.add(stored.record.runId);
      }
      if (lines.length > 0) await append(fh, lines.join(''), request.out, file);
      report.written += lines.length;
      request.onProgress?.({ ...report });
      cursor = page.next;
    } while (cursor !== undefined);
    return report;
  } finally {
    await fh.close();
  }
}

/** A run as an export writes it, its id first (see {@link LINE_START}). */
export function exported(run: StoredRun): ExportedRun {
  return {
    runId: run.record.runId,
    record: run.record,
    inputs: inputsOf(run.snapshot),
    outputs: run.record.outputs,
    steps: run.steps,
  };
}

/** The inputs in a persisted xstate snapshot's context (as `run-view.ts` reads them). */
function inputsOf(snapshot: unknown): Record<string, unknown> | null {
  const inputs = (snapshot as { context?: { inputs?: unknown } } | undefined)?.context?.inputs;
  return typeof inputs === 'object' && inputs !== null && !Array.isArray(inputs)
    ? (inputs as Record<string, unknown>)
    : null;
}

/** Opens the export to read and append, created if need be; the errors say what to fix. */
async function openExport(given: string, file: string): Promise<FileHandle> {
  try {
    const st = await stat(file).catch(() => undefined);
    if (st?.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    // A device or a pipe is no file to go on in (it has no end to cut back to).
    if (st !== undefined && !st.isFile()) throw new Error('it is not a regular file');
    return await open(file, 'a+');
  } catch (err) {
    throw cannotWriteExport(given, file, err);
  }
}

async function append(fh: FileHandle, text: string, given: string, file: string): Promise<void> {
  try {
    await fh.appendFile(text);
  } catch (err) {
    throw cannotWriteExport(given, file, err);
  }
}

/**
 * Cuts off a last line without its newline (an export killed while writing it); resolves with
 * whether there was one.
 */
async function cutHalfLine(fh: FileHandle): Promise<boolean> {
  const { size } = await fh.stat();
  if (size === 0) return false;
  const chunk = Buffer.alloc(64 * 1024);
  let end = size;
  let at = size;
  while (at > 0) {
    const from = Math.max(0, at - chunk.length);
    const { bytesRead } = await fh.read(chunk, 0, at - from, from);
    const nl = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (nl !== -1) {
      end = from + nl + 1;
      break;
    }
    at = from;
    end = 0;
  }
  if (end === size) return false;
  await fh.truncate(end);
  return true;
}

/** The ids of the runs the export holds; `INVALID_REQUEST` for a line no export wrote. */
async function idsIn(given: string, file: string): Promise<Set<string>> {
  const ids = new Set<string>();
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let n = 0;
  let bad: number | undefined;
  lines.on('line', (line) => {
    n++;
    const id = LINE_START.exec(line)?.[1];
    if (id !== undefined) ids.add(id);
    else if (bad === undefined) {
      bad = n;
      lines.close();
    }
  });
  await once(lines, 'close');
  if (bad !== undefined) throw notAnExport(given, file, bad);
  return ids;
}

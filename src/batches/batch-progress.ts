/**
 * The progress of `dirigent batch` on stderr: a live bar in a terminal, a plain line now and then
 * elsewhere (a log file, CI), and the summary at the end.
 */
import cliProgress from 'cli-progress';
import { formatCount, formatRate } from './format-count.js';
import { formatDuration } from './format-duration.js';
import type { BatchCounts } from './batch-counts.js';

export type { BatchCounts } from './batch-counts.js';
export { ErrorTally, type ErrorGroup, type ErrorTallyOptions } from './error-tally.js';
export { formatBatchSummary, type BatchSummary } from './format-batch-summary.js';

/** Where progress goes: `process.stderr` fits, and so does any object with `write`. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  /** The terminal's width (default 80). */
  columns?: number;
}

/** What {@link batchProgress} takes. */
export interface BatchProgressOptions {
  /** Default `process.stderr`. */
  stream?: ProgressStream;
  /** Draw a live bar (default: whether the stream is a terminal), else print plain lines. */
  tty?: boolean;
  /** Plain lines: one every this many ms, when something changed (default 10 s). */
  intervalMs?: number;
  /**
   * How much of the input has been read (`InputRecordReader.bytesRead`, `.totalBytes`): with a
   * total, the progress shows a percentage and an ETA; without, neither.
   */
  bytes?: () => { read: number; total?: number };
}

/** A batch's progress display: tell it the counts as they change, and stop it at the end. */
export interface BatchProgress {
  /** The counts now. Cheap: call it on every change; the display redraws at its own pace. */
  update(counts: BatchCounts): void;
  /**
   * Draws the final counts and ends the display (the bar is cleared and a final line printed in its
   * place). Call it however the batch ends (in a `finally`); later calls do nothing.
   */
  stop(final: BatchCounts): void;
}

const ZERO: BatchCounts = { done: 0, completed: 0, failed: 0, running: 0, skipped: 0, read: 0 };

/**
 * Shows a batch's progress on `stream`. In a terminal: one line redrawn at most 10 times a second
 * by cli-progress, with a bar and percentage (when the input's size is known), the done, failed and
 * running counts, the rate, the elapsed time and the ETA (when the input's size is known). Without
 * a terminal: a plain line every `intervalMs`, and none when nothing changed since the last:
 *
 * ```text
 * batch: 12,345 done (12,001 completed, 344 failed), 32 running, 812/s, 15s
 * ```
 *
 * The ETA counts the inputs still to do as those read but not done plus those in the bytes not
 * read yet (at the rate of records per byte seen so far), and divides by the rate of inputs done.
 */
export function batchProgress(options: BatchProgressOptions = {}): BatchProgress {
  const stream: ProgressStream = options.stream ?? process.stderr;
  const tty = options.tty ?? stream.isTTY === true;
  const started = Date.now();
  const estimate = estimator(started, options.bytes);
  let counts: BatchCounts = ZERO;
  let stopped = false;

  if (tty) {
    const bar = new UnrefBar({
      // cli-progress draws only on a stream that says it is a terminal: `tty: true` forces it.
      stream: {
        isTTY: true,
        get columns() {
          return stream.columns;
        },
        write: (text: string) => stream.write(text),
      } as unknown as NodeJS.WritableStream,
      format: (_options, params) => barLine(estimate(counts), params.maxWidth),
      fps: 10,
      clearOnComplete: true,
      hideCursor: false,
      gracefulExit: false,
    });
    bar.start(1, 0);
    return {
      update(next) {
        if (stopped) return;
        counts = next;
        estimate.observe(next);
        bar.update({});
      },
      stop(final) {
        if (stopped) return;
        stopped = true;
        counts = final;
        bar.stop();
        stream.write(`${plainLine(estimate(final))}\n`);
      },
    };
  }

  let printed = key(ZERO);
  const print = () => {
    printed = key(counts);
    stream.write(`${plainLine(estimate(counts))}\n`);
  };
  const timer = setInterval(() => {
    if (key(counts) !== printed) print();
  }, options.intervalMs ?? 10_000);
  timer.unref();
  return {
    update(next) {
      if (stopped) return;
      counts = next;
      estimate.observe(next);
    },
    stop(final) {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      counts = final;
      print();
    },
  };
}

/** A cli-progress bar whose redraw timer does not keep the process alive by itself. */
class UnrefBar extends cliProgress.SingleBar {
  override render(): void {
    super.render();
    (this as unknown as { timer?: NodeJS.Timeout | null }).timer?.unref();
  }
}

/** What a progress line shows, at one moment. */
interface Snapshot {
  counts: BatchCounts;
  elapsedMs: number;
  perSecond: number;
  /** Inputs finished (done or skipped) over all inputs, when the input's size is known. */
  fraction?: number;
  etaMs?: number;
}

interface Estimator {
  (counts: BatchCounts): Snapshot;
  /** Takes the first counts with a record read as the baseline of records per byte. */
  observe(counts: BatchCounts): void;
}

function estimator(started: number, bytes: BatchProgressOptions['bytes']): Estimator {
  // Records per byte are measured from the first record on, so bytes skipped before it (a resumed
  // batch's reader skipping lines unread) do not count as read records.
  let baseline: { read: number; bytes: number } | undefined;
  const observe = (counts: BatchCounts) => {
    if (baseline === undefined && bytes !== undefined && counts.read > 0) {
      baseline = { read: counts.read, bytes: bytes().read };
    }
  };
  const snapshot = (counts: BatchCounts): Snapshot => {
    observe(counts);
    const elapsedMs = Date.now() - started;
    const perSecond = elapsedMs > 0 ? (counts.done * 1000) / elapsedMs : 0;
    const out: Snapshot = { counts, elapsedMs, perSecond };
    const b = bytes?.();
    if (b?.total === undefined) return out;
    let perByte: number | undefined;
    if (baseline !== undefined && b.read > baseline.bytes && counts.read > baseline.read) {
      perByte = (counts.read - baseline.read) / (b.read - baseline.bytes);
    } else if (b.read > 0) {
      perByte = counts.read / b.read;
    }
    if (perByte === undefined) return out;
    const unread = Math.max(0, b.total - b.read) * perByte;
    const pending = Math.max(0, counts.read - counts.done - counts.skipped);
    const remaining = pending + unread;
    const finished = counts.done + counts.skipped;
    out.fraction = finished + remaining > 0 ? finished / (finished + remaining) : 1;
    if (remaining === 0) out.etaMs = 0;
    else if (perSecond > 0) out.etaMs = (remaining / perSecond) * 1000;
    return out;
  };
  return Object.assign(snapshot, { observe });
}

/** The terminal line: `batch [████░░░░] 45% | 12,345 done, 344 failed, 32 running | 812/s | 15s | ETA 20s`. */
function barLine(s: Snapshot, width: number): string {
  const c = s.counts;
  const tally = [`${formatCount(c.done)} done`, `${formatCount(c.failed)} failed`];
  tally.push(`${formatCount(c.running)} running`);
  if ((c.waiting ?? 0) > 0) tally.push(`${formatCount(c.waiting ?? 0)} waiting`);
  if (c.skipped > 0) tally.push(`${formatCount(c.skipped)} skipped`);
  const parts = [tally.join(', '), formatRate(s.perSecond), formatDuration(s.elapsedMs)];
  if (s.fraction !== undefined) {
    parts.push(`ETA ${s.etaMs === undefined ? '--' : formatDuration(s.etaMs)}`);
  }
  let text = parts.join(' | ');
  if (s.fraction !== undefined) {
    const percent = `${Math.floor(s.fraction * 100)}%`;
    text = `${percent} | ${text}`;
    const size = Math.min(30, width - text.length - 'batch [] '.length - 1);
    if (size >= 10) {
      const full = Math.round(s.fraction * size);
      text = `[${'█'.repeat(full)}${'░'.repeat(size - full)}] ${text}`;
    }
  }
  return `batch ${text}`;
}

/** The plain line: `batch: 12,345 done (12,001 completed, 344 failed), 32 running, 812/s, 15s`. */
function plainLine(s: Snapshot): string {
  const c = s.counts;
  const parts = [
    `${formatCount(c.done)} done (${formatCount(c.completed)} completed, ${formatCount(c.failed)} failed)`,
    `${formatCount(c.running)} running`,
  ];
  if ((c.waiting ?? 0) > 0) parts.push(`${formatCount(c.waiting ?? 0)} waiting`);
  if (c.skipped > 0) parts.push(`${formatCount(c.skipped)} skipped`);
  parts.push(formatRate(s.perSecond), formatDuration(s.elapsedMs));
  if (s.fraction !== undefined) {
    parts.push(`${Math.floor(s.fraction * 100)}%`);
    if (s.etaMs !== undefined && s.etaMs > 0) parts.push(`ETA ${formatDuration(s.etaMs)}`);
  }
  return `batch: ${parts.join(', ')}`;
}

function key(c: BatchCounts): string {
  return `${c.done},${c.completed},${c.failed},${c.running},${c.skipped},${c.read},${c.waiting ?? 0}`;
}

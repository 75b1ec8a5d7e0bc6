import type { BatchCounts } from './batch-counts.js';
import type { ErrorGroup } from './error-tally.js';
import { formatCount, formatRate } from './format-count.js';
import { formatDuration } from './format-duration.js';

/** What a batch did, for {@link formatBatchSummary}. */
export interface BatchSummary {
  batchId: string;
  counts: BatchCounts;
  elapsedMs: number;
  /** The most frequent errors (`ErrorTally.top()`). */
  topErrors: ErrorGroup[];
}

/**
 * The end-of-batch summary, for people: the counts, the rate, and the most frequent errors with
 * the first lines that had them. Several lines, no trailing newline, no colour. For example:
 *
 * ```text
 * Batch 7f3c: 12,345 done in 2m05s (98/s)
 *   12,001 completed
 *      344 failed
 *
 * Most frequent errors:
 *   200 × TOOL_FAILED: job <n> failed
 *         lines 3, 17, 42, 51, 77, …
 * ```
 */
export function formatBatchSummary(summary: BatchSummary): string {
  const { counts, elapsedMs } = summary;
  const rate = elapsedMs > 0 ? formatRate((counts.done * 1000) / elapsedMs) : undefined;
  const out = [
    `Batch ${summary.batchId}: ${formatCount(counts.done)} done in ${formatDuration(elapsedMs)}${rate !== undefined && counts.done > 0 ? ` (${rate})` : ''}`,
  ];
  const rows: [number, string][] = [
    [counts.completed, 'completed'],
    [counts.failed, 'failed'],
  ];
  if (counts.skipped > 0) rows.push([counts.skipped, 'skipped (done in an earlier attempt)']);
  const waiting = counts.waiting ?? 0;
  if (waiting > 0) rows.push([waiting, 'waiting for a signal']);
  if (counts.running > 0) rows.push([counts.running, 'still running']);
  const width = Math.max(...rows.map(([n]) => formatCount(n).length));
  for (const [n, what] of rows) out.push(`  ${formatCount(n).padStart(width)} ${what}`);

  if (summary.topErrors.length > 0) {
    out.push('', 'Most frequent errors:');
    const countWidth = Math.max(...summary.topErrors.map((e) => formatCount(e.count).length));
    for (const e of summary.topErrors) {
      const n = formatCount(e.count).padStart(countWidth);
      out.push(`  ${n} × ${e.code}: ${e.message}`);
      if (e.lines.length > 0) {
        const more = e.count > e.lines.length ? ', …' : '';
        const label = e.lines.length === 1 && e.count === 1 ? 'line' : 'lines';
        out.push(`  ${' '.repeat(countWidth + 3)}${label} ${e.lines.join(', ')}${more}`);
      }
    }
  }
  return out.join('\n');
}

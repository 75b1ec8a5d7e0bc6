/**
 * `dirigent runs export [filters] --out runs.jsonl`: the ended runs the filters match, written as
 * JSON lines by `Dirigent.exportRuns` (see `operations/export-runs.ts`). This face turns options
 * into the request and the report into a line; progress goes to standard error.
 */
import type { RunStatus } from '../engine/run-record.js';
import { parseTags } from '../engine/run-tags.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { ExportFilter, ExportReport } from '../operations/export-runs.js';
import { reportInvalid, withDirigent, type CommonOptions } from './run-command.js';
import { parseTimeOption } from './time-option.js';

const out = (line: string) => process.stdout.write(line + '\n');

/** The options of `dirigent runs export`. */
export interface RunsExportOptions extends CommonOptions {
  out?: string;
  status?: string;
  directive?: string;
  tag?: string[];
  since?: string;
  until?: string;
  /** Runs read per page (`--page-size`). */
  pageSize?: string;
}

/**
 * Exports, then prints `N runs written to <file> (M already there)`; `--json` prints
 * `{"file", "written", "skipped", "notEnded", "repaired"}`. Exits 0, or 2 for options that do not
 * read and a file that cannot be written.
 */
export async function runsExportCommand(opts: RunsExportOptions): Promise<number> {
  let filter: ExportFilter;
  let pageSize: number | undefined;
  try {
    filter = exportFilterOf(opts);
    pageSize = opts.pageSize === undefined ? undefined : Number(opts.pageSize);
    if (opts.out === undefined || opts.out.trim() === '')
      throw DirigentError.fatal(
        ErrorCode.INVALID_REQUEST,
        'dirigent runs export needs --out <file>.',
        {
          hint: 'Name the JSON Lines file to write: dirigent runs export --out runs.jsonl.',
        },
      );
  } catch (err) {
    return reportInvalid(err, opts);
  }
  const file = opts.out;
  return withDirigent(opts, async (dirigent) => {
    const report = await dirigent.exportRuns({
      filter,
      out: file,
      ...(pageSize !== undefined && { pageSize }),
      onProgress: (r) =>
        process.stderr.write(`export: ${r.written} written, ${r.skipped} already there\n`),
    });
    if (opts.json) out(JSON.stringify(report));
    else out(summary(report));
    return 0;
  });
}

/** The report as a line. */
function summary(r: ExportReport): string {
  const runs = (n: number) => `${n} run${n === 1 ? '' : 's'}`;
  const notes = [
    `${r.skipped} already there`,
    ...(r.notEnded > 0 ? [`${runs(r.notEnded)} not ended yet, left out`] : []),
    ...(r.repaired ? ['a half-written last line (an interrupted export) was cut off'] : []),
  ];
  return `${runs(r.written)} written to ${r.file} (${notes.join('; ')}).`;
}

/** The filter the options give, its times parsed. */
function exportFilterOf(opts: RunsExportOptions): ExportFilter {
  const tags = parseTags(opts.tag ?? []);
  return {
    ...(opts.status !== undefined && { status: opts.status as RunStatus }),
    ...(opts.directive !== undefined && { directive: opts.directive }),
    ...(tags && { tags }),
    ...(opts.since !== undefined && { since: parseTimeOption(opts.since, '--since') }),
    ...(opts.until !== undefined && { until: parseTimeOption(opts.until, '--until') }),
  };
}

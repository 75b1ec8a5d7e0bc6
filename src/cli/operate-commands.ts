/**
 * The CLI's commands that operate runs (DESIGN.md, "Operating runs"): `redrive` and `rerun`, and
 * the bulk forms of `cancel` and `redrive`. Each turns options into one operation of `Dirigent`
 * and its result into lines, printing and exiting as `run` does.
 */
import { userInfo } from 'node:os';
import { parseTime } from '../api/parse-time.js';
import type { RunStatus } from '../engine/run-record.js';
import { parseTags } from '../engine/run-tags.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { BulkActionName, BulkFilter } from '../operations/bulk-action.js';
import { Dirigent } from '../operations/dirigent.js';
import type { PauseTarget } from '../operations/pause.js';
import { parseInputs } from './parse-inputs.js';
import {
  cancelCommand,
  printRecord,
  priorityOption,
  reportInvalid,
  withDirigent,
  type CommonOptions,
} from './run-command.js';
import { progressPrinter } from './progress-printer.js';

const out = (line: string) => process.stdout.write(line + '\n');

/** Who a command acts for, as run records note it: `cli:<user>`. */
export function cliActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return 'cli';
  }
}

/**
 * `dirigent redrive <runId>`: the run goes on from the step that failed, printed as `run` does;
 * `--all [filters]`: every failed or cancelled run they match (see {@link bulkCommand}).
 */
export async function redriveCommand(
  runId: string | undefined,
  opts: BulkOptions,
): Promise<number> {
  let how: 'one' | 'all';
  try {
    how = oneOrAll('redrive', runId, opts);
  } catch (err) {
    return reportInvalid(err, opts);
  }
  if (how === 'all') return bulkCommand('redrive', opts);
  return withDirigent(opts, async (dirigent: Dirigent) =>
    printRecord(
      await dirigent.redrive(runId!, {
        by: cliActor(),
        ...(!opts.json && { observer: progressPrinter(out) }),
      }),
      opts,
    ),
  );
}

/** `dirigent rerun <runId> [--from <step>] [--input k=v]…`: a new run from a step, printed as `run` does. */
export function rerunCommand(
  runId: string,
  opts: CommonOptions & { from?: string; input: string[]; inputs?: string; priority?: string },
): Promise<number> {
  return withDirigent(opts, async (dirigent: Dirigent) => {
    const inputs = parseInputs(opts.input, opts.inputs);
    const handle = await dirigent.rerun(runId, {
      trigger: 'cli',
      ...(opts.from !== undefined && { from: opts.from }),
      ...(Object.keys(inputs).length > 0 && { inputs }),
      ...(opts.priority !== undefined && { priority: priorityOption(opts.priority) }),
      ...(!opts.json && { observer: progressPrinter(out) }),
    });
    return printRecord(await dirigent.wait(handle.runId), opts);
  });
}

/** The options of a bulk command (`cancel --all`, `redrive --all`). */
export interface BulkOptions extends CommonOptions {
  all?: boolean;
  status?: string;
  directive?: string;
  tag?: string[];
  since?: string;
  until?: string;
  dryRun?: boolean;
  actionId?: string;
}

/**
 * `dirigent cancel|redrive --all [filters] [--dry-run] [--json]`: the action on every run the
 * filters match (see `operations/bulk-action.ts`); progress on standard error, then the report.
 * `--json` prints `{"matched", "acted", "skipped", "failed"}` (and a dry run's `sample`). Exits 0,
 * or 1 when the action failed on some run.
 */
export function bulkCommand(action: BulkActionName, opts: BulkOptions): Promise<number> {
  return withDirigent(opts, async (dirigent: Dirigent) => {
    const filter = bulkFilterOf(opts);
    const dryRun = opts.dryRun === true;
    const report = await dirigent.bulk({
      action,
      filter,
      dryRun,
      by: cliActor(),
      ...(opts.actionId !== undefined && { actionId: opts.actionId }),
      onProgress: (r) => {
        if (!dryRun)
          process.stderr.write(
            `${action}: ${r.matched} matched so far: ${r.acted} acted on, ${r.skipped} skipped, ${r.failed} failed\n`,
          );
      },
    });
    if (!dryRun)
      process.stderr.write(`action ${report.actionId} (give --action-id to go on with it)\n`);
    const { matched, acted, skipped, failed, failures, sample } = report;
    if (opts.json) {
      out(JSON.stringify({ matched, acted, skipped, failed, ...(sample && { sample }) }));
      return failed > 0 ? 1 : 0;
    }
    if (dryRun) {
      out(`${matched} run${matched === 1 ? '' : 's'} match; nothing was changed (--dry-run).`);
      for (const r of sample ?? [])
        out(
          `  ${r.runId}  ${r.status.padEnd(9)}  ${r.directive}  ${new Date(r.startedAt).toISOString()}${r.summary ? `  (${r.summary})` : ''}`,
        );
      if (matched > (sample?.length ?? 0)) out(`  … and ${matched - (sample?.length ?? 0)} more`);
      return 0;
    }
    out(
      `${action}: ${matched} matched, ${acted} acted on, ${skipped} skipped (the action did not apply to them), ${failed} failed`,
    );
    for (const f of failures) out(`  ${f.runId}: ${f.message} [${f.code}]`);
    return failed > 0 ? 1 : 0;
  });
}

/** The filter the options give, its times parsed. */
function bulkFilterOf(opts: BulkOptions): BulkFilter {
  const tags = parseTags(opts.tag ?? []);
  return {
    ...(opts.status !== undefined && { status: opts.status as RunStatus }),
    ...(opts.directive !== undefined && { directive: opts.directive }),
    ...(tags && { tags }),
    ...(opts.since !== undefined && { since: parseTime(opts.since, '--since') }),
    ...(opts.until !== undefined && { until: parseTime(opts.until, '--until') }),
  };
}

/**
 * A command that acts on one run, or with `--all` on every run its filters match: exactly one of
 * the two (`INVALID_REQUEST` otherwise, exit 2).
 */
export function oneOrAll(
  command: string,
  runId: string | undefined,
  opts: BulkOptions,
): 'one' | 'all' {
  const filtered =
    ['status', 'directive', 'since', 'until', 'dryRun', 'actionId'].some(
      (k) => opts[k as keyof BulkOptions] !== undefined,
    ) || (opts.tag?.length ?? 0) > 0;
  if (opts.all === true && runId === undefined) return 'all';
  if (opts.all !== true && runId !== undefined && !filtered) return 'one';
  throw DirigentError.fatal(
    ErrorCode.INVALID_REQUEST,
    runId !== undefined && opts.all === true
      ? `dirigent ${command} takes a run id or --all, not both.`
      : runId === undefined
        ? `dirigent ${command} needs a run id, or --all with filters for every run they match.`
        : `dirigent ${command} <runId> acts on that run: filters go with --all.`,
    {
      hint: `dirigent ${command} <runId>, or dirigent ${command} --all --status failed --directive <id> --tag k=v --since 2025-01-31 --dry-run.`,
    },
  );
}

/**
 * `dirigent cancel <runId>` (see `run-command.ts`), or `--all [filters]`: every run they match
 * that has not ended (see {@link bulkCommand}).
 */
export async function cancelOneOrAll(
  runId: string | undefined,
  opts: BulkOptions & { compensate?: boolean },
): Promise<number> {
  let how: 'one' | 'all';
  try {
    how = oneOrAll('cancel', runId, opts);
  } catch (err) {
    return reportInvalid(err, opts);
  }
  return how === 'all' ? bulkCommand('cancel', opts) : cancelCommand(runId!, opts);
}

/**
 * `dirigent pause <directive>|--all` and `dirigent resume <directive>|--all`: prints the pauses
 * in force (and how many runs a resume began again); `--json` prints them as the API answers.
 */
export function pauseCommand(
  how: 'pause' | 'resume',
  directive: string | undefined,
  opts: CommonOptions & { all?: boolean },
): Promise<number> {
  return withDirigent(opts, async (dirigent: Dirigent) => {
    const target: PauseTarget =
      opts.all === true && directive === undefined
        ? { all: true }
        : ({ directive, ...(opts.all === true && { all: true }) } as PauseTarget);
    const answer =
      how === 'pause' ? { paused: await dirigent.pause(target) } : await dirigent.resume(target);
    if (opts.json) {
      out(JSON.stringify(how === 'pause' ? answer.paused : answer));
      return 0;
    }
    if ('resumed' in answer)
      out(`resumed ${answer.resumed} paused run${answer.resumed === 1 ? '' : 's'}`);
    const { all, directives } = answer.paused;
    if (all) out('the whole deployment is paused (dirigent resume --all)');
    for (const d of directives) out(`paused: ${d}`);
    if (!all && directives.length === 0) out('nothing is paused');
    return 0;
  });
}

/** `dirigent pause`. */
export function pauseDirective(
  directive: string | undefined,
  opts: CommonOptions & { all?: boolean },
) {
  return pauseCommand('pause', directive, opts);
}

/** `dirigent resume`. */
export function resumeDirective(
  directive: string | undefined,
  opts: CommonOptions & { all?: boolean },
) {
  return pauseCommand('resume', directive, opts);
}

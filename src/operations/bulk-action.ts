/**
 * Bulk actions (DESIGN.md, "Operating runs"): cancel, redrive or rerun every run a filter
 * matches. A dry run counts the runs and shows a sample, changing nothing. An action reads the
 * runs a page at a time (never the whole list), acts on a few at once, reports its progress, and
 * keeps in a ledger, under its action id, what it did to each run: started again after an
 * interruption (the same action id), it acts on each run once (and tries again those it failed
 * on), and its report counts every run once, whichever pass acted on it.
 *
 * A run is written `pending` in the ledger before it is acted on, and its outcome after: a run
 * found `pending` when the action starts again was being acted on when it stopped, and is looked
 * at before anything is done again (a cancel asked for has ended it; a redrive asked for is in its
 * record, by the action's name).
 */
import { createHash } from 'node:crypto';
import { childRunId } from '../engine/child-run-id.js';
import { hasEnded, type RunRecord, type RunStatus } from '../engine/run-record.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { checkRunFilter, type RunFilter } from '../run-backend/run-filter.js';

/** What a bulk action does to each run. */
export type BulkActionName = 'cancel' | 'redrive' | 'rerun';

/** The bulk actions, for messages and schemas. */
export const BULK_ACTIONS: readonly BulkActionName[] = ['cancel', 'redrive', 'rerun'];

/** Which runs an action is on: a run filter without its page. */
export type BulkFilter = Omit<RunFilter, 'limit' | 'cursor'>;

/** What a run's entry in the ledger says. */
export type BulkOutcome = 'pending' | 'acted' | 'skipped' | 'failed';

/** Where an action keeps what it did to each run (a file embedded, a hash on Redis). */
export interface BulkLedger {
  /** What the action did so far to each of `runIds` (those it did nothing to are left out). */
  lookup(actionId: string, runIds: readonly string[]): Promise<Map<string, BulkOutcome>>;
  /** Notes `outcome` for each run given. */
  write(actionId: string, outcomes: ReadonlyMap<string, BulkOutcome>): Promise<void>;
}

/** What a bulk action asks. */
export interface BulkRequest {
  action: BulkActionName;
  filter: BulkFilter;
  /** Count and show a sample; change nothing. */
  dryRun?: boolean;
  /**
   * The action's id: the same id goes on where an interrupted action stopped. Default: one made
   * from the action and the filter, so the same command given again goes on.
   */
  actionId?: string;
  /** Who asks, as redriven runs' records note it (with the action id). */
  by?: string;
  /** Told after each page. */
  onProgress?: (report: BulkReport) => void;
}

/** A run of a dry run's sample. */
export interface BulkSample {
  runId: string;
  directive: string;
  status: RunStatus;
  startedAt: number;
  summary?: string;
}

/** What a bulk action did (or, dry, would act on). */
export interface BulkReport {
  actionId: string;
  action: BulkActionName;
  dryRun: boolean;
  /** Runs the filter matched. */
  matched: number;
  /** Runs acted on: cancelled, redriven, rerun. */
  acted: number;
  /** Runs left as they were: the action does not apply to them (an ended run to cancel, say). */
  skipped: number;
  /** Runs the action failed on; `failures` says why, for the first few. */
  failed: number;
  failures: { runId: string; code: string; message: string }[];
  /** Dry run: the first runs matched. */
  sample?: BulkSample[];
}

/** What an action asks of the operations, for one run. */
export interface BulkOperations {
  list(filter: RunFilter): Promise<{ runs: RunRecord[]; next?: string }>;
  get(runId: string): Promise<RunRecord>;
  /** Cancels the run (resolving once it is told, or has ended). */
  cancel(runId: string, reason: string): Promise<unknown>;
  /** Redrives the run (resolving once it goes on). */
  redrive(runId: string, by: string): Promise<unknown>;
  /**
   * Reruns the run from the step it failed at, as run `newRunId` (resolving once the new run is
   * under way).
   */
  rerun(runId: string, newRunId: string): Promise<unknown>;
}

/** Runs read per page. */
const PAGE = 500;
/** Runs acted on at once. */
const AT_ONCE = 16;
/** Runs a dry run shows. */
const SAMPLE = 10;
/** Failures a report lists. */
const FAILURES = 20;

/** Checks a bulk request as a caller gives it: `INVALID_REQUEST` saying what is wrong. */
export function checkBulkRequest(request: BulkRequest): void {
  if (!BULK_ACTIONS.includes(request.action))
    throw DirigentError.fatal(
      ErrorCode.INVALID_REQUEST,
      `"${String(request.action)}" is not a bulk action.`,
      { hint: `Actions: ${BULK_ACTIONS.join(', ')}.` },
    );
  checkRunFilter({ ...request.filter, limit: PAGE });
  if (
    request.actionId !== undefined &&
    !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(request.actionId)
  )
    throw DirigentError.fatal(
      ErrorCode.INVALID_REQUEST,
      `"${request.actionId}" is not an action id.`,
      {
        hint: 'An action id is letters, digits, ".", "_" and "-" (at most 128), as a report gave it.',
      },
    );
}

/** The id of an action with no id of its own: the action and its filter, hashed. */
export function actionIdOf(action: BulkActionName, filter: BulkFilter): string {
  const tags = filter.tags
    ? Object.entries(filter.tags).sort(([a], [b]) => a.localeCompare(b))
    : undefined;
  const key = JSON.stringify([
    action,
    filter.status,
    filter.directive,
    tags,
    filter.since,
    filter.until,
  ]);
  return `${action}-${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

/** Who a bulk action acts as, in the records of the runs it redrives. */
export function bulkActor(actionId: string, by: string | undefined): string {
  return `${by ?? 'bulk'} (action ${actionId})`;
}

/**
 * Does `request` (see the module comment) through `ops`, keeping what it did in `ledger`;
 * resolves with its report.
 */
export async function runBulkAction(
  ops: BulkOperations,
  ledger: BulkLedger,
  request: BulkRequest,
): Promise<BulkReport> {
  checkBulkRequest(request);
  const actionId = request.actionId ?? actionIdOf(request.action, request.filter);
  const dryRun = request.dryRun === true;
  const report: BulkReport = {
    actionId,
    action: request.action,
    dryRun,
    matched: 0,
    acted: 0,
    skipped: 0,
    failed: 0,
    failures: [],
    ...(dryRun && { sample: [] }),
  };
  const by = bulkActor(actionId, request.by);
  const act = actOn(ops, request.action, actionId, by);
  const actOnPage = async (runs: RunRecord[]) => {
    // Looked up a page at a time: memory stays bounded by the page, whatever the action's size.
    const done = await ledger.lookup(
      actionId,
      runs.map((r) => r.runId),
    );
    const todo = runs.filter((r) => {
      const before = done.get(r.runId);
      // A run an earlier pass failed on is tried again; one it acted on or skipped is counted.
      if (before === undefined || before === 'pending' || before === 'failed') return true;
      count(report, r.runId, before);
      return false;
    });
    for (let i = 0; i < todo.length; i += AT_ONCE) {
      const batch = todo.slice(i, i + AT_ONCE);
      await ledger.write(actionId, new Map(batch.map((r) => [r.runId, 'pending' as const])));
      const outcomes = await Promise.all(
        batch.map(async (r) => [r.runId, await act(r, done.get(r.runId) === 'pending')] as const),
      );
      const written = new Map<string, BulkOutcome>();
      for (const [runId, outcome] of outcomes) {
        written.set(runId, outcome.outcome);
        done.set(runId, outcome.outcome);
        count(report, runId, outcome.outcome, outcome.error);
      }
      await ledger.write(actionId, written);
    }
  };
  let cursor: string | undefined;
  do {
    const page = await ops.list({ ...request.filter, limit: PAGE, ...(cursor && { cursor }) });
    cursor = page.next;
    report.matched += page.runs.length;
    if (dryRun) {
      for (const r of page.runs)
        if (report.sample!.length < SAMPLE)
          report.sample!.push({
            runId: r.runId,
            directive: r.directive,
            status: r.status,
            startedAt: r.startedAt,
            ...(r.summary !== undefined && { summary: r.summary }),
          });
    } else await actOnPage(page.runs);
    request.onProgress?.(structuredClone(report));
  } while (cursor !== undefined);
  return report;
}

function count(report: BulkReport, runId: string, outcome: BulkOutcome, error?: DirigentError) {
  if (outcome === 'acted') report.acted++;
  else if (outcome === 'skipped') report.skipped++;
  else if (outcome === 'failed') {
    report.failed++;
    if (report.failures.length < FAILURES)
      report.failures.push({
        runId,
        code: error?.code ?? ErrorCode.INTERNAL,
        message: error?.message ?? 'The action failed on this run.',
      });
  }
}

/** Acting on one run: its outcome, and the error when it failed. */
type Act = (
  run: RunRecord,
  wasPending: boolean,
) => Promise<{ outcome: BulkOutcome; error?: DirigentError }>;

/** Codes that mean the action does not apply to the run as it stands now: skipped, not failed. */
const NOT_APPLICABLE = new Set<string>([
  ErrorCode.RUN_ENDED,
  ErrorCode.RUN_NOT_REDRIVABLE,
  ErrorCode.RUN_NOT_ENDED,
]);

function actOn(ops: BulkOperations, action: BulkActionName, actionId: string, by: string): Act {
  const applies: Record<BulkActionName, (r: RunRecord) => boolean> = {
    cancel: (r) => !hasEnded(r.status),
    redrive: (r) => r.status === 'failed' || r.status === 'cancelled',
    rerun: (r) => hasEnded(r.status) && r.status !== 'completed',
  };
  const doIt: Record<BulkActionName, (runId: string) => Promise<unknown>> = {
    cancel: (runId) => ops.cancel(runId, `Cancelled by bulk action ${actionId}.`),
    redrive: (runId) => ops.redrive(runId, by),
    rerun: (runId) => ops.rerun(runId, rerunIdOf(actionId, runId)),
  };
  return async (listed, wasPending) => {
    try {
      // Acted on when the action stopped? The run says so now.
      const run = wasPending ? await ops.get(listed.runId) : listed;
      if (wasPending && (await tookEffect(ops, action, run, actionId, by)))
        return { outcome: 'acted' };
      if (!applies[action](run)) return { outcome: 'skipped' };
      await doIt[action](run.runId);
      return { outcome: 'acted' };
    } catch (err) {
      const error = DirigentError.from(err);
      if (NOT_APPLICABLE.has(error.code)) return { outcome: 'skipped' };
      return { outcome: 'failed', error };
    }
  };
}

/** Whether an action asked of `run` before an interruption took effect. */
async function tookEffect(
  ops: BulkOperations,
  action: BulkActionName,
  run: RunRecord,
  actionId: string,
  by: string,
): Promise<boolean> {
  if (action === 'cancel') return run.status === 'cancelled';
  if (action === 'redrive') return (run.redrives ?? []).some((r) => r.by === by);
  return ops.get(rerunIdOf(actionId, run.runId)).then(
    () => true,
    () => false,
  );
}

/** The id of the run a bulk rerun makes of `runId`: one per action and run, whoever asks again. */
export function rerunIdOf(actionId: string, runId: string): string {
  return childRunId(runId, `rerun:${actionId}`);
}

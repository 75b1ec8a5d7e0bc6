/**
 * `dirigent batch <directive> --inputs <file.jsonl | file.csv | ->`, `dirigent batch resume <id>`
 * and `dirigent batch status <id>`: a face on the operations' batch (batches/batch.ts). Exit
 * status 0 when every input completed, 1 when some failed (or the batch stopped before the end),
 * 2 when it could not start.
 */
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { batchProgress, formatBatchSummary } from '../batches/batch-progress.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import {
  batchStatus,
  resumeBatch,
  runBatchFile,
  type BatchOptions,
  type BatchReport,
} from '../batches/batch.js';
import { batchDir, batchIdOf } from '../batches/batch-store.js';
import type { Dirigent } from '../operations/dirigent.js';
import { reportInvalid, withDirigent, type CommonOptions } from './run-command.js';
import { badOptionValue } from '../errors/request-errors.js';
import { cancelled } from '../errors/stop-errors.js';

/** Options of `dirigent batch`. */
export interface BatchCommandOptions extends CommonOptions {
  inputs?: string;
  out?: string;
  concurrency?: string;
  map?: string[];
  limit?: string;
  unordered?: boolean;
  retryFailed?: boolean;
  id?: string;
  detach?: boolean;
  /** Plain progress lines every this many seconds when not in a terminal (default 10). */
  progressEvery?: string;
}

const out = (line: string) => process.stdout.write(`${line}\n`);

/** `dirigent batch <directive> --inputs f`. */
export function batchCommand(directive: string, opts: BatchCommandOptions): Promise<number> {
  return withDirigent(opts, async (dirigent) => {
    if (opts.inputs === undefined)
      throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, 'dirigent batch needs --inputs.', {
        hint: 'Give a .jsonl or .csv file (or - for standard input): dirigent batch <directive> --inputs inputs.jsonl.',
      });
    const options: BatchOptions = {
      directive,
      allowFile: true,
      inputs: opts.inputs,
      ...(opts.out !== undefined && { out: opts.out }),
      ...(opts.concurrency !== undefined && {
        concurrency: whole(opts.concurrency, '--concurrency'),
      }),
      ...(opts.map !== undefined && opts.map.length > 0 && { map: parseMap(opts.map) }),
      ...(opts.limit !== undefined && { limit: whole(opts.limit, '--limit') }),
      ordered: opts.unordered !== true,
      ...(opts.retryFailed === true && { retryFailed: true }),
      ...(opts.id !== undefined && { batchId: opts.id }),
    };
    if (opts.detach) return detach(dirigent, options, opts);
    return attended(dirigent, opts, (signal, onCounts) =>
      runBatchFile(dirigent, { ...options, signal, onCounts }),
    );
  });
}

/** `dirigent batch resume <id>`: the batch as it was started, from where it stopped. */
export function batchResumeCommand(
  batchId: string,
  opts: CommonOptions & { retryFailed?: boolean; concurrency?: string; progressEvery?: string },
): Promise<number> {
  return withDirigent(opts, (dirigent) =>
    attended(dirigent, opts, (signal, onCounts) =>
      resumeBatch(dirigent, batchId, {
        signal,
        onCounts,
        ...(opts.retryFailed === true && { retryFailed: true }),
        ...(opts.concurrency !== undefined && {
          concurrency: whole(opts.concurrency, '--concurrency'),
        }),
      }),
    ),
  );
}

/** `dirigent batch status <id>`: how a batch stands, from its state and its results. */
export async function batchStatusCommand(
  batchId: string,
  opts: { project: string; json?: boolean },
): Promise<number> {
  try {
    const status = await batchStatus(resolve(opts.project), batchId);
    if (opts.json) out(JSON.stringify(status));
    else {
      const running = status.state === 'running';
      out(`batch ${batchId}: ${status.state}${running ? ` (process ${status.pid})` : ''}`);
      out(`  directive ${status.directive}, inputs ${status.inputs}`);
      out(`  results ${status.out}: ${status.results.done} done, ${status.results.failed} failed`);
      if (status.state === 'stopped') out(`  resume it with: dirigent batch resume ${batchId}`);
    }
    return 0;
  } catch (err) {
    return reportInvalid(err, opts);
  }
}

/**
 * Runs a batch with its progress on stderr and its summary at the end. Ctrl-C or SIGTERM stops
 * taking inputs; runs under way end (embedded) or go on on the workers (Redis), and the batch
 * resumes from there when run again.
 */
async function attended(
  dirigent: Dirigent,
  opts: CommonOptions & { progressEvery?: string },
  work: (
    signal: AbortSignal,
    onCounts: NonNullable<BatchOptions['onCounts']>,
  ) => Promise<BatchReport>,
): Promise<number> {
  const stop = new AbortController();
  const onSignal = () => stop.abort(cancelled('The batch', 'interrupted from the terminal'));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let bytes = { read: 0, total: undefined as number | undefined };
  const progress = batchProgress({
    stream: process.stderr,
    ...(opts.progressEvery !== undefined && { intervalMs: Number(opts.progressEvery) * 1000 }),
    bytes: () => ({ read: bytes.read, ...(bytes.total !== undefined && { total: bytes.total }) }),
  });
  let report: BatchReport | undefined;
  try {
    report = await work(stop.signal, (counts, read) => {
      bytes = { read: read.read, total: read.total };
      progress.update(counts);
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (report !== undefined) progress.stop(report.outcome.counts);
    else progress.stop({ done: 0, completed: 0, failed: 0, running: 0, skipped: 0, read: 0 });
  }
  const { meta, outcome } = report;
  const summary = formatBatchSummary({
    batchId: meta.batchId,
    counts: outcome.counts,
    elapsedMs: report.elapsedMs,
    topErrors: report.topErrors,
  });
  if (opts.json)
    out(
      JSON.stringify({
        batchId: meta.batchId,
        state: meta.state,
        results: meta.out,
        counts: outcome.counts,
        earlier: report.earlier,
        topErrors: report.topErrors,
        ...(outcome.stoppedBy && { stoppedBy: outcome.stoppedBy.toJSON() }),
      }),
    );
  else {
    process.stderr.write(`${summary}\n`);
    process.stderr.write(`results: ${meta.out}\n`);
    if (!outcome.finished)
      process.stderr.write(
        `${outcome.stoppedBy ? `stopped: ${outcome.stoppedBy.message} [${outcome.stoppedBy.code}]\n` : 'stopped.\n'}resume with: dirigent batch resume ${meta.batchId}\n`,
      );
  }
  // Failures of earlier attempts stand unless this one ran them again.
  const failed = outcome.counts.failed + (report.retried ? 0 : report.earlier.failed);
  return outcome.finished && failed === 0 ? 0 : 1;
}

/**
 * `--detach`: the batch goes on in a process of its own (`dirigent batch resume <id>`, its output
 * in the batch's `log`), and this one prints the batch's id at once.
 */
async function detach(
  dirigent: Dirigent,
  options: BatchOptions,
  opts: BatchCommandOptions,
): Promise<number> {
  if (options.inputs === '-')
    throw DirigentError.fatal(
      ErrorCode.INVALID_REQUEST,
      '--detach needs an inputs file, not standard input.',
    );
  const batchId = options.batchId ?? (await batchIdOf(options.directive, options.inputs as string));
  // Write the batch's state first (it validates everything), then hand it to a process of its own.
  await runBatchFile(dirigent, { ...options, batchId, limit: 0 });
  const log = openSync(join(batchDir(dirigent.projectDir, batchId), 'log'), 'a');
  const args = [process.argv[1]!, 'batch', 'resume', batchId, '--project', dirigent.projectDir];
  if (opts.redis !== undefined) args.push('--redis', opts.redis);
  if (opts.prefix !== undefined) args.push('--prefix', opts.prefix);
  if (options.retryFailed) args.push('--retry-failed');
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', log, log] });
  child.unref();
  out(opts.json ? JSON.stringify({ batchId, pid: child.pid }) : batchId);
  return 0;
}

/** `--map 'Full Name=name' --map email=to` (or comma-separated): CSV header → input name. */
function parseMap(entries: string[]): Record<string, string> {
  const map: Record<string, string> = {};
  for (const entry of entries.flatMap((e) => e.split(','))) {
    const at = entry.indexOf('=');
    if (at <= 0 || at === entry.length - 1)
      throw DirigentError.fatal(
        ErrorCode.INVALID_REQUEST,
        `--map takes column=input, not "${entry}".`,
        {
          hint: "Example: --map 'Full Name=name,E-mail=email'.",
        },
      );
    map[entry.slice(0, at).trim()] = entry.slice(at + 1).trim();
  }
  return map;
}

function whole(text: string, option: string): number {
  const n = Number(text);
  if (/^\d+$/.test(text) && n >= 0) return n;
  throw badOptionValue(option, 'a whole number', text);
}

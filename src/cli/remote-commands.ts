/**
 * The CLI against a Redis deployment (`--redis <url>` or `REDIS_URL`): `run` enqueues and waits
 * (or, with `--detach`, prints the run id), `signal` and `cancel` go through the runs queue, and
 * `status` and `runs` read the run store. Output and exit statuses are those of the embedded CLI.
 */
import { resolve } from 'node:path';
import { formatDiagnostic } from '../directive/diagnostics.js';
import { DirectiveLoader } from '../engine/directive-loader.js';
import { FileRunStore } from '../engine/file-run-store.js';
import type { RunRecord, RunStatus } from '../engine/run-record.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { connectRedis, pingRedis, redisDownMessage, redisUrl } from '../queue/redis-connection.js';
import { DEFAULT_PREFIX } from '../queue/queue-names.js';
import { RunsClient } from '../queue/runs-client.js';
import { parseInputs, parsePayload } from './parse-inputs.js';
import { progressPrinter } from './progress-printer.js';
import { printRecord, reportInvalid, type RunOptions } from './run-command.js';
import { cliTelemetry } from './cli-telemetry.js';

interface RemoteOptions {
  project: string;
  json?: boolean;
  redis?: string;
  prefix?: string;
}

/** `dirigent run` on Redis. */
export function remoteRun(target: string, opts: RunOptions & RemoteOptions): Promise<number> {
  return withClient(opts, async (client) => {
    const projectDir = resolve(opts.project);
    const loader = new DirectiveLoader(projectDir);
    const loaded = await loader.loadFile(await loader.resolve(target));
    loader.items.close();
    if (!opts.json)
      for (const w of loaded.compiled.directive.warnings)
        process.stderr.write(formatDiagnostic(w) + '\n');
    if (!opts.json && (await client.workers()) === 0)
      process.stderr.write(
        'No worker is connected: the run waits in the queue until one starts (`dirigent worker`).\n',
      );
    const { runId, record } = await client.start(
      loaded,
      parseInputs(opts.input, opts.inputs),
      projectDir,
      {
        detach: opts.detach === true,
        trigger: 'cli',
        ...(!opts.json && {
          observer: progressPrinter((line) => process.stdout.write(`${line}\n`)),
        }),
      },
    );
    if (record === undefined) {
      process.stdout.write(opts.json ? `${JSON.stringify({ runId })}\n` : `${runId}\n`);
      return 0;
    }
    return printRecord(record, opts);
  });
}

/** `dirigent signal` on Redis. */
export function remoteSignal(
  runId: string,
  name: string,
  opts: RemoteOptions & { payload?: string },
): Promise<number> {
  return withClient(opts, async (client) =>
    printRecord(
      await client.signal(
        runId,
        name,
        parsePayload(opts.payload),
        resolve(opts.project),
        opts.json ? undefined : progressPrinter((line) => process.stdout.write(`${line}\n`)),
      ),
      opts,
    ),
  );
}

/** `dirigent cancel` on Redis. */
export function remoteCancel(runId: string, opts: RemoteOptions): Promise<number> {
  return withClient(opts, async (client) =>
    printRecord(
      await client.cancel(runId, resolve(opts.project), 'Cancelled with `dirigent cancel`.'),
      opts,
    ),
  );
}

/** `dirigent status <runId>`: the run record, from Redis or from the project's `.dirigent/runs`. */
export async function statusCommand(runId: string, opts: RemoteOptions): Promise<number> {
  if (redisUrl(opts.redis) === undefined) {
    try {
      const run = await new FileRunStore(resolve(opts.project)).load(runId);
      if (run === undefined)
        throw DirigentError.fatal(ErrorCode.RUN_NOT_FOUND, `No run with id ${runId}.`, {
          hint: 'Embedded runs are kept in <project>/.dirigent/runs/ once they wait or end; pass --redis for a Redis deployment.',
        });
      return printStatus(run.record, opts);
    } catch (err) {
      return reportInvalid(err, opts);
    }
  }
  return withClient(opts, async (client) => printStatus(await client.status(runId), opts));
}

/** `dirigent runs [--status s] [--directive d] [--limit n]`: run records, newest first. */
export async function runsCommand(
  opts: RemoteOptions & { status?: string; directive?: string; limit?: string },
): Promise<number> {
  const limit = opts.limit === undefined ? 50 : Number(opts.limit);
  const keep = (r: RunRecord) =>
    (opts.status === undefined || r.status === opts.status) &&
    (opts.directive === undefined || r.directive === opts.directive);
  const print = (records: RunRecord[]) => {
    if (opts.json) process.stdout.write(`${JSON.stringify(records)}\n`);
    else
      for (const r of records)
        process.stdout.write(
          `${r.runId}  ${r.status.padEnd(9)}  ${r.directive}  ${new Date(r.startedAt).toISOString()}\n`,
        );
    return 0;
  };
  if (redisUrl(opts.redis) === undefined) {
    const all = await new FileRunStore(resolve(opts.project)).list();
    return print(all.filter(keep).slice(0, limit));
  }
  return withClient(opts, async (client) =>
    print(
      await client.list({
        ...(opts.status !== undefined && { status: opts.status as RunStatus }),
        ...(opts.directive !== undefined && { directive: opts.directive }),
        limit,
      }),
    ),
  );
}

function printStatus(record: RunRecord, opts: { json?: boolean }): number {
  if (opts.json) process.stdout.write(`${JSON.stringify(record)}\n`);
  else printRecord(record, opts);
  return 0;
}

async function withClient(
  opts: RemoteOptions,
  work: (client: RunsClient) => Promise<number>,
): Promise<number> {
  const url = redisUrl(opts.redis)!;
  if (!(await pingRedis(url, 2000))) {
    return reportInvalid(
      DirigentError.fatal(ErrorCode.REDIS_UNAVAILABLE, redisDownMessage(url), {
        hint: 'Without --redis and REDIS_URL, runs are embedded in this process.',
      }),
      opts,
    );
  }
  const redis = connectRedis(url);
  const client = new RunsClient(
    redis,
    opts.prefix ?? (process.env.DIRIGENT_PREFIX || DEFAULT_PREFIX),
    cliTelemetry(),
  );
  try {
    return await work(client);
  } catch (err) {
    return reportInvalid(err, opts);
  } finally {
    await client.close();
    redis.disconnect();
  }
}

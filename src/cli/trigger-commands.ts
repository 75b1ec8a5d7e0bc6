/**
 * `dirigent schedule add|list|remove|sync` and `dirigent emit`: schedules and events, on the
 * operations (`operations/dirigent.ts`), as every other face has them.
 */
import { parseInputs, parseJsonOption } from './parse-inputs.js';
import { withDirigent, type CommonOptions } from './run-command.js';

const out = (line: string) => process.stdout.write(line + '\n');

/** `dirigent schedule add <directive> --cron … [--timezone tz] [--input k=v]… [--inputs json] [--id id]`. */
export function scheduleAddCommand(
  directive: string,
  opts: CommonOptions & {
    cron: string;
    timezone?: string;
    input: string[];
    inputs?: string;
    id?: string;
  },
): Promise<number> {
  return withDirigent(opts, async (dirigent) => {
    const s = await dirigent.addSchedule({
      directive,
      cron: opts.cron,
      ...(opts.timezone !== undefined && { timezone: opts.timezone }),
      inputs: parseInputs(opts.input, opts.inputs),
      ...(opts.id !== undefined && { id: opts.id }),
    });
    out(
      opts.json
        ? JSON.stringify(s)
        : `schedule ${s.id}: ${s.directive} at "${s.cron}"${s.timezone ? ` (${s.timezone})` : ''}`,
    );
    return 0;
  });
}

/** `dirigent schedule list`. */
export function scheduleListCommand(opts: CommonOptions): Promise<number> {
  return withDirigent(opts, async (dirigent) => {
    const all = await dirigent.schedules();
    if (opts.json) out(JSON.stringify(all));
    else
      for (const s of all)
        out(
          `${s.id}  ${s.directive}  "${s.cron}"${s.timezone ? ` ${s.timezone}` : ''}${s.next ? `  next ${new Date(s.next).toISOString()}` : ''}`,
        );
    return 0;
  });
}

/** `dirigent schedule remove <id>`. */
export function scheduleRemoveCommand(id: string, opts: CommonOptions): Promise<number> {
  return withDirigent(opts, async (dirigent) => {
    await dirigent.removeSchedule(id);
    out(opts.json ? JSON.stringify({ removed: id }) : `removed schedule ${id}`);
    return 0;
  });
}

/** `dirigent schedule sync`: registers the schedules the project's directives declare. */
export function scheduleSyncCommand(opts: CommonOptions): Promise<number> {
  return withDirigent(opts, async (dirigent) => {
    const result = await dirigent.syncSchedules();
    out(
      opts.json
        ? JSON.stringify(result)
        : `${result.kept} declared schedule(s) registered${result.removed.length ? `; removed ${result.removed.join(', ')}` : ''}`,
    );
    return 0;
  });
}

/**
 * `dirigent emit <event> [--payload json] [--id id]`: starts every directive that runs on the
 * event; exit 0 when each started (or had started for this event id), 1 when one could not.
 */
export function emitCommand(
  event: string,
  opts: CommonOptions & { payload?: string; id?: string },
): Promise<number> {
  return withDirigent(opts, async (dirigent) => {
    const payload = parseJsonOption(opts.payload, '--payload') ?? {};
    const emitted = await dirigent.emit(event, payload, {
      ...(opts.id !== undefined && { id: opts.id }),
    });
    // Embedded, the runs live in this process: they end (or wait) before it exits.
    if (dirigent.mode === 'embedded')
      await Promise.all(emitted.runs.map((r) => ('runId' in r ? dirigent.wait(r.runId) : null)));
    if (opts.json) out(JSON.stringify(emitted));
    else {
      if (emitted.runs.length === 0) out(`event ${event} (${emitted.id}): no directive runs on it`);
      for (const r of emitted.runs)
        out(
          'error' in r
            ? `✗ ${r.directive}: ${r.error.message} [${r.error.code}]`
            : `${r.created ? '▸' : '='} ${r.directive}: run ${r.runId}${r.created ? '' : ' (already started for this event)'}`,
        );
    }
    return emitted.runs.every((r) => !('error' in r)) ? 0 : 1;
  });
}

/**
 * The CLI's commands that operate runs (DESIGN.md, "Operating runs"): `redrive` and `rerun`, and
 * the bulk forms of `cancel` and `redrive`. Each turns options into one operation of `Dirigent`
 * and its result into lines, printing and exiting as `run` does.
 */
import { userInfo } from 'node:os';
import { Dirigent } from '../operations/dirigent.js';
import { printRecord, withDirigent, type CommonOptions } from './run-command.js';
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

/** `dirigent redrive <runId>`: the run goes on from the step that failed; printed as `run` does. */
export function redriveCommand(runId: string, opts: CommonOptions): Promise<number> {
  return withDirigent(opts, async (dirigent: Dirigent) =>
    printRecord(
      await dirigent.redrive(runId, {
        by: cliActor(),
        ...(!opts.json && { observer: progressPrinter(out) }),
      }),
      opts,
    ),
  );
}

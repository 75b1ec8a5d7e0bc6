import { collect } from './collect-option.js';
import type { Command } from 'commander';
import { lazyAction } from './lazy-action.js';
import { connectionOptions, detachOption, inputOptions, payloadOption } from './shared-options.js';

/** `--all` and the filters of a bulk action (`cancel --all`, `redrive --all`). */
function bulkOptions(command: Command): Command {
  return command
    .option('--all', 'act on every run the filters match (see --dry-run)')
    .option('--status <status>', 'with --all: only runs with this status')
    .option('--directive <item_id>', 'with --all: only runs of this directive')
    .option(
      '--tag <name=value>',
      'with --all: only runs with this tag (repeatable: every one)',
      collect,
      [],
    )
    .option('--since <time>', 'with --all: only runs started at or after (ISO 8601 or epoch ms)')
    .option('--until <time>', 'with --all: only runs started at or before (ISO 8601 or epoch ms)')
    .option('--dry-run', 'with --all: say how many runs match, and show some; change nothing')
    .option(
      '--action-id <id>',
      'with --all: go on with an interrupted action (default: one id per action and filters, so the same command goes on)',
    );
}

/**
 * Registers `run`, `signal`, `cancel`, `status`, `runs` and `runs export` (see `run-command.ts`,
 * `runs-export-command.ts`): their options and help only; each loads its command's module when it
 * runs.
 */
export function registerRunCommands(program: Command): void {
  const run = program
    .command('run')
    .description(
      'Run a directive (a file, or an item id under .ai/directives/) and print its outcome.',
    )
    .argument('<target>', 'directive file or item id');
  inputOptions(run);
  connectionOptions(run, { embedded: true });
  detachOption(run);
  run
    .option('--json', 'print the run record as JSON')
    .option(
      '--tag <name=value>',
      "tag the run (repeatable), besides the directive's <tag>s: runs are found by their tags",
      collect,
      [],
    )
    .option(
      '--idempotency-key <key>',
      "start one run per key (24 h): run again with the key, and the key's run is answered",
    )
    .option(
      '--reuse <policy>',
      'with --idempotency-key, when its run failed or was cancelled: never (answer it) or failed (start a new run)',
    )
    .option(
      '--priority <1-10>',
      'higher first when workers are busy, start order within a priority (default: as the directive says, else 5)',
    )
    .option('--no-interactive', 'never prompt for instruction steps; leave the run waiting')
    .option(
      '--timeout <seconds>',
      'wait at most this long for the outcome (exit 4; on Redis the run goes on, embedded it is cancelled)',
    )
    .action(lazyAction(async () => (await import('./run-command.js')).runCommand));

  const signal = program
    .command('signal')
    .description('Send a signal to a waiting run and print its outcome as `run` does.')
    .argument('<runId>')
    .argument('<name>', 'signal name (the waiting step, or its <wait signal>)');
  payloadOption(signal);
  connectionOptions(signal, { embedded: true })
    .option('--json', 'print the run record as JSON')
    .action(lazyAction(async () => (await import('./run-command.js')).signalCommand));

  bulkOptions(
    connectionOptions(
      program
        .command('cancel')
        .description(
          'Cancel a run (a waiting one, or with Redis any run, stopping its tools), then run the compensations of its completed steps; with --all, every run the filters match that has not ended.',
        )
        .argument('[runId]'),
      { embedded: true },
    ),
  )
    .option('--no-compensate', "end the run at once, without running its steps' compensations")
    .option(
      '--json',
      'print the run record as JSON (with --all: {matched, acted, skipped, failed})',
    )
    .action(lazyAction(async () => (await import('./operate-commands.js')).cancelOneOrAll));

  bulkOptions(
    connectionOptions(
      program
        .command('redrive')
        .description(
          'Redrive a failed or cancelled run: it goes on under its id from the step that failed; completed steps are not run again. With --all, every failed or cancelled run the filters match.',
        )
        .argument('[runId]'),
      { embedded: true },
    ),
  )
    .option(
      '--json',
      'print the run record as JSON (with --all: {matched, acted, skipped, failed})',
    )
    .action(lazyAction(async () => (await import('./operate-commands.js')).redriveCommand));

  const rerun = program
    .command('rerun')
    .description(
      "Rerun a run from one of its steps, as a new run: the steps before it are not run again; their results and the state are the old run's.",
    )
    .argument('<runId>')
    .option('--from <step>', 'the step to start at (default: the step the run failed at)');
  inputOptions(rerun);
  connectionOptions(rerun, { embedded: true })
    .option(
      '--priority <1-10>',
      'higher first when workers are busy (default: as the directive says, else 5)',
    )
    .option('--json', 'print the run record as JSON')
    .action(lazyAction(async () => (await import('./operate-commands.js')).rerunCommand));

  for (const how of ['pause', 'resume'] as const)
    connectionOptions(
      program
        .command(how)
        .description(
          how === 'pause'
            ? 'Pause a directive, or everything with --all: its runs hold their next steps and wait as paused (runs under way after the step they are in), until it is resumed.'
            : 'Resume a paused directive, or everything with --all: the paused runs go on, in the order they started.',
        )
        .argument('[directive]', 'the directive (item id)')
        .option('--all', how === 'pause' ? 'the whole deployment' : 'every pause'),
      { embedded: true },
    )
      .option('--json', 'print the pauses in force as JSON')
      .action(
        lazyAction(async () => {
          const m = await import('./operate-commands.js');
          return how === 'pause' ? m.pauseDirective : m.resumeDirective;
        }),
      );

  connectionOptions(
    program.command('status').description("Print a run's record.").argument('<runId>'),
    { embedded: true },
  )
    .option('--json', 'print the run record as JSON')
    .action(lazyAction(async () => (await import('./run-command.js')).statusCommand));

  const runs = connectionOptions(
    program
      .command('runs')
      .description('List runs, newest first.')
      .option(
        '--status <status>',
        'only runs with this status (queued, running, waiting, completed, failed, cancelled)',
      )
      .option('--directive <item_id>', 'only runs of this directive')
      .option('--tag <name=value>', 'only runs with this tag (repeatable: every one)', collect, [])
      .option('--limit <n>', 'at most this many (default 50)'),
    { embedded: true },
  )
    .option('--json', 'print a JSON array of run records')
    .action(lazyAction(async () => (await import('./run-command.js')).runsCommand));

  // Its options are its own: `runs export --status failed` is not `runs --status failed`.
  runs.enablePositionalOptions();
  connectionOptions(
    runs
      .command('export')
      .description(
        'Write ended runs (record, inputs, outputs, steps) to a JSON Lines file before their retention removes them; run again with the same --out to go on after an interruption.',
      )
      .option(
        '--out <file>',
        'the JSON Lines file to write (appended to: runs already in it are not written again)',
      )
      .option('--status <status>', 'only runs with this status (completed, failed, cancelled)')
      .option('--directive <item_id>', 'only runs of this directive')
      .option('--tag <name=value>', 'only runs with this tag (repeatable: every one)', collect, [])
      .option(
        '--since <time>',
        'only runs started at or after (ISO 8601, epoch ms, or ago: 24h, 7d)',
      )
      .option(
        '--until <time>',
        'only runs started at or before (ISO 8601, epoch ms, or ago: 24h, 7d)',
      )
      .option('--page-size <n>', 'runs read at a time (default 100, at most 1000)'),
    { embedded: true },
  )
    .option('--json', 'print {file, written, skipped, notEnded, repaired}')
    .action(lazyAction(async () => (await import('./runs-export-command.js')).runsExportCommand));
}

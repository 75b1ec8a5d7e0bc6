import type { Command } from 'commander';
import { collect } from './collect-option.js';
import { lazyAction } from './lazy-action.js';
import { connectionOptions, detachOption, projectOption } from './shared-options.js';

/**
 * Registers `batch`, `batch resume` and `batch status`: their options and help only; each loads
 * `batch-command.ts` when it runs.
 */
export function registerBatchCommands(program: Command): void {
  const batch = program
    .command('batch')
    .description('Run a directive once per line of a JSONL or CSV file, resumably, with progress.')
    // `batch resume <id> --project d`: options after a subcommand's name are the subcommand's.
    .enablePositionalOptions()
    .argument('<directive>', 'directive file or item id')
    .option('--inputs <file>', 'a .jsonl or .csv file, or - for standard input (JSONL)')
    .option(
      '--out <file>',
      'results, one JSON line per input (default .dirigent/batches/<id>/results.jsonl)',
    )
    .option('--concurrency <n>', 'runs under way at once (default 8)')
    .option(
      '--map <col=input>',
      'CSV: a column read as an input (repeatable, or comma-separated)',
      collect,
      [],
    )
    .option('--limit <n>', 'at most this many inputs')
    .option('--unordered', 'write results as runs end, not in input order')
    .option('--retry-failed', 'run again the inputs that failed in an earlier attempt')
    .option('--id <id>', 'the batch id (default: from the directive and the inputs file)');
  detachOption(batch)
    .addHelpText(
      'after',
      '\nWith --detach, the batch goes on in a process of its own (as `dirigent batch resume\n<id>` would), and the command prints its id.',
    )
    .option(
      '--progress-every <s>',
      'without a terminal: a progress line every this many seconds (default 10)',
    );
  connectionOptions(batch, { embedded: true })
    .option('--json', 'print the summary as JSON')
    .action(lazyAction(async () => (await import('./batch-command.js')).batchCommand));
  connectionOptions(
    batch
      .command('resume')
      .description(
        'Resume a batch where it stopped (inputs done are skipped, runs under way waited for).',
      )
      .argument('<id>')
      .option('--retry-failed', 'run again the inputs that failed')
      .option('--concurrency <n>', 'runs under way at once')
      .option(
        '--progress-every <s>',
        'without a terminal: a progress line every this many seconds',
      ),
    { embedded: true },
  )
    .option('--json', 'print the summary as JSON')
    .action(lazyAction(async () => (await import('./batch-command.js')).batchResumeCommand));
  projectOption(
    batch
      .command('status')
      .description("How a batch stands: its state and its results' counts.")
      .argument('<id>'),
  )
    .option('--json', 'print as JSON')
    .action(lazyAction(async () => (await import('./batch-command.js')).batchStatusCommand));
}

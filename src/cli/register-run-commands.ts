import type { Command } from 'commander';
import { collect } from './collect-option.js';
import { lazyAction } from './lazy-action.js';

/**
 * Registers `run`, `signal`, `cancel`, `status` and `runs` (see `run-command.ts`): their options and
 * help only; each loads its command's module when it runs.
 */
export function registerRunCommands(program: Command): void {
  program
    .command('run')
    .description(
      'Run a directive (a file, or an item id under .ai/directives/) and print its outcome.',
    )
    .argument('<target>', 'directive file or item id')
    .option('-i, --input <name=value>', 'an input (repeatable)', collect, [])
    .option('--inputs <json|@file>', 'all inputs as a JSON object, or @file holding one')
    .option('-p, --project <dir>', 'project directory', process.cwd())
    .option('--json', 'print the run record as JSON')
    .option('--no-interactive', 'never prompt for instruction steps; leave the run waiting')
    .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
    .option('--detach', 'with Redis: print the run id at once instead of waiting')
    .option(
      '--timeout <seconds>',
      'wait at most this long for the outcome (exit 4; on Redis the run goes on, embedded it is cancelled)',
    )
    .action(lazyAction(async () => (await import('./run-command.js')).runCommand));

  program
    .command('signal')
    .description('Send a signal to a waiting run and print its outcome as `run` does.')
    .argument('<runId>')
    .argument('<name>', 'signal name (the waiting step, or its <wait signal>)')
    .option('--payload <json>', "the step's result (JSON, or a plain string)")
    .option('-p, --project <dir>', 'project directory', process.cwd())
    .option('--json', 'print the run record as JSON')
    .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
    .action(lazyAction(async () => (await import('./run-command.js')).signalCommand));

  program
    .command('cancel')
    .description('Cancel a run (a waiting one, or with Redis any run, stopping its tools).')
    .argument('<runId>')
    .option('-p, --project <dir>', 'project directory', process.cwd())
    .option('--json', 'print the run record as JSON')
    .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
    .action(lazyAction(async () => (await import('./run-command.js')).cancelCommand));

  program
    .command('status')
    .description("Print a run's record.")
    .argument('<runId>')
    .option('-p, --project <dir>', 'project directory', process.cwd())
    .option('--json', 'print the run record as JSON')
    .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
    .action(lazyAction(async () => (await import('./run-command.js')).statusCommand));

  program
    .command('runs')
    .description('List runs, newest first.')
    .option(
      '--status <status>',
      'only runs with this status (queued, running, waiting, completed, failed, cancelled)',
    )
    .option('--directive <item_id>', 'only runs of this directive')
    .option('--limit <n>', 'at most this many (default 50)')
    .option('-p, --project <dir>', 'project directory', process.cwd())
    .option('--json', 'print a JSON array of run records')
    .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
    .action(lazyAction(async () => (await import('./run-command.js')).runsCommand));
}

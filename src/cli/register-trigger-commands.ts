import type { Command } from 'commander';
import { collect } from './collect-option.js';
import { lazyAction } from './lazy-action.js';

/**
 * Registers `schedule add|list|remove|sync` and `emit`: their options and help only; each loads
 * `trigger-commands.ts` when it runs.
 */
export function registerTriggerCommands(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('Schedules on a Redis deployment: a run of a directive per cron tick.');
  const deployment = (c: Command) =>
    c
      .option('-p, --project <dir>', 'project directory', process.cwd())
      .option('--redis <url>', 'the Redis deployment (default: $REDIS_URL)')
      .option('--json', 'print JSON');
  deployment(
    schedule
      .command('add')
      .description('Add (or replace, with the same --id) a schedule.')
      .argument('<directive>', "the directive's item id")
      .requiredOption('--cron <expr>', 'when: minute hour day month weekday, e.g. "0 3 * * *"')
      .option('--timezone <tz>', 'an IANA time zone (default UTC)')
      .option('-i, --input <name=value>', 'an input of every run (repeatable)', collect, [])
      .option('--inputs <json|@file>', 'the inputs as a JSON object, or @file holding one')
      .option(
        '--id <id>',
        "the schedule's id (default: derived from the directive and the schedule)",
      ),
  ).action(lazyAction(async () => (await import('./trigger-commands.js')).scheduleAddCommand));
  deployment(schedule.command('list').description('List the schedules.')).action(
    lazyAction(async () => (await import('./trigger-commands.js')).scheduleListCommand),
  );
  deployment(schedule.command('remove').description('Remove a schedule.').argument('<id>')).action(
    lazyAction(async () => (await import('./trigger-commands.js')).scheduleRemoveCommand),
  );
  deployment(
    schedule
      .command('sync')
      .description(
        "Register the schedules the project's directives declare (workers do at start).",
      ),
  ).action(lazyAction(async () => (await import('./trigger-commands.js')).scheduleSyncCommand));

  program
    .command('emit')
    .description('Send an event: every directive with <on event="…"> runs once per event id.')
    .argument('<event>', 'the event name, e.g. order.created')
    .option('--payload <json|@file>', 'the payload: a JSON object (the runs\' input "event")')
    .option('--id <id>', "the event's id (default: a new one); the same id starts no second run")
    .option('-p, --project <dir>', 'project directory', process.cwd())
    .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
    .option('--json', 'print JSON')
    .action(lazyAction(async () => (await import('./trigger-commands.js')).emitCommand));
}

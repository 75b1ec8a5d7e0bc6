import type { Command } from 'commander';
import { lazyAction } from './lazy-action.js';
import { connectionOptions, inputOptions } from './shared-options.js';

/**
 * Registers `schedule add|list|remove|sync` and `emit`: their options and help only; each loads
 * `trigger-commands.ts` when it runs.
 */
export function registerTriggerCommands(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('Schedules on a Redis deployment: a run of a directive per cron tick.');
  /** Schedules live in the deployment: there is no embedded one. */
  const onDeployment = (c: Command) =>
    connectionOptions(c, { embedded: false }).option('--json', 'print JSON');
  const add = schedule
    .command('add')
    .description('Add (or replace, with the same --id) a schedule.')
    .argument('<directive>', "the directive's item id")
    .requiredOption('--cron <expr>', 'when: minute hour day month weekday, e.g. "0 3 * * *"')
    .option('--timezone <tz>', 'an IANA time zone (default UTC)');
  inputOptions(add).option(
    '--id <id>',
    "the schedule's id (default: derived from the directive and the schedule)",
  );
  onDeployment(add).action(
    lazyAction(async () => (await import('./trigger-commands.js')).scheduleAddCommand),
  );
  onDeployment(schedule.command('list').description('List the schedules.')).action(
    lazyAction(async () => (await import('./trigger-commands.js')).scheduleListCommand),
  );
  onDeployment(
    schedule.command('remove').description('Remove a schedule.').argument('<id>'),
  ).action(lazyAction(async () => (await import('./trigger-commands.js')).scheduleRemoveCommand));
  onDeployment(
    schedule
      .command('sync')
      .description(
        "Register the schedules the project's directives declare (workers do at start).",
      ),
  ).action(lazyAction(async () => (await import('./trigger-commands.js')).scheduleSyncCommand));

  connectionOptions(
    program
      .command('emit')
      .description('Send an event: every directive with <on event="…"> runs once per event id.')
      .argument('<event>', 'the event name, e.g. order.created')
      // An event's payload, not a waiting step's: a JSON object, which the runs get as input "event".
      .option('--payload <json|@file>', 'the payload: a JSON object (the runs\' input "event")')
      .option('--id <id>', "the event's id (default: a new one); the same id starts no second run"),
    { embedded: true },
  )
    .option('--json', 'print JSON')
    .action(lazyAction(async () => (await import('./trigger-commands.js')).emitCommand));
}

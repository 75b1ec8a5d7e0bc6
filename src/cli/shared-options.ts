/**
 * The options several commands share, each defined once: the same flag and the same help wherever
 * it applies, so that `dirigent <command> --help` reads alike across commands. Every command
 * registers them from here (`register-*.ts`); names a command used to take before are kept as
 * hidden aliases ({@link hiddenAlias}): they still work, and the help shows only the one name.
 *
 * | meaning | option | hidden aliases |
 * |---|---|---|
 * | the project | `-p, --project <dir>` | |
 * | the deployment's Redis | `--redis <url>` | |
 * | the deployment's key prefix | `--prefix <prefix>` | |
 * | start, and return without waiting for the outcome | `--detach` | `execute --async` |
 * | the value sent to a waiting step | `--payload <json>` | `execute --answer` |
 * | one input / all inputs | `-i, --input <name=value>` / `--inputs <json\|@file>` | |
 */
import { Option, type Command } from 'commander';
import { collect } from './collect-option.js';

/** The help of each shared option, by its long flag: the one place its words are written. */
export const SHARED_OPTION_HELP = {
  '--project': 'the project folder',
  '--redis': "the deployment's Redis URL (default: $REDIS_URL; its shards: $DIRIGENT_SHARDS)",
  '--prefix': "the deployment's key prefix in Redis (default: $DIRIGENT_PREFIX, else dirigent)",
  '--detach': 'return once started, without waiting for the outcome (a run: on Redis only)',
  '--payload': 'the value the waiting step receives: JSON, or else plain text',
  '--input': 'an input (repeatable; wins over --inputs)',
  '--inputs': 'all inputs as a JSON object, or @file holding one',
} as const;

/**
 * Said after the options of every command that also works without Redis (`--redis` and
 * `$REDIS_URL` unset). Commander does not wrap it: its lines are short.
 */
export const EMBEDDED_NOTE = [
  'Without --redis or $REDIS_URL, the command works embedded: runs run in this',
  "process, and are kept in the project's .dirigent/ folder.",
].join('\n');

/** `-p, --project <dir>`: default `$DIRIGENT_PROJECT`, else the current folder. */
export function projectOption(command: Command): Command {
  return command.addOption(
    new Option('-p, --project <dir>', SHARED_OPTION_HELP['--project']).default(
      process.env.DIRIGENT_PROJECT || process.cwd(),
      '$DIRIGENT_PROJECT, else the current folder',
    ),
  );
}

/**
 * `--redis <url>` and `--prefix <prefix>`: the deployment a command talks to. `embedded`: the
 * command also works without one, and its help says how ({@link EMBEDDED_NOTE}).
 */
export function deploymentOptions(command: Command, how: { embedded: boolean }): Command {
  command
    .addOption(new Option('--redis <url>', SHARED_OPTION_HELP['--redis']))
    .addOption(new Option('--prefix <prefix>', SHARED_OPTION_HELP['--prefix']));
  if (how.embedded) command.addHelpText('after', `\n${EMBEDDED_NOTE}`);
  return command;
}

/** The project and the deployment: what every command that reads or steers runs takes. */
export function connectionOptions(command: Command, how: { embedded: boolean }): Command {
  return deploymentOptions(projectOption(command), how);
}

/** `--detach`: start, and return without waiting for the outcome. */
export function detachOption(command: Command): Command {
  return command.addOption(new Option('--detach', SHARED_OPTION_HELP['--detach']));
}

/** `--payload <json>`: the value sent to a waiting step (JSON when it parses, else text). */
export function payloadOption(command: Command): Command {
  return command.addOption(new Option('--payload <json>', SHARED_OPTION_HELP['--payload']));
}

/** `-i, --input <name=value>` (repeatable) and `--inputs <json|@file>`. */
export function inputOptions(command: Command): Command {
  return command
    .addOption(
      new Option('-i, --input <name=value>', SHARED_OPTION_HELP['--input'])
        .argParser(collect)
        .default([]),
    )
    .addOption(new Option('--inputs <json|@file>', SHARED_OPTION_HELP['--inputs']));
}

/**
 * A former name of one of `command`'s options, kept working but left out of the help: given, it
 * sets the option `target` (its attribute name, e.g. `detach`) as the option itself would.
 *
 * ```ts
 * hiddenAlias(execute, '--async', 'detach'); // `execute --async` is `execute --detach`
 * ```
 */
export function hiddenAlias(command: Command, flags: string, target: string): Command {
  const alias = new Option(flags).hideHelp();
  command.addOption(alias);
  // Commander announces every option it parses; a flag without a value arrives as undefined.
  command.on(`option:${alias.name()}`, (value: string | undefined) =>
    command.setOptionValueWithSource(target, value ?? true, 'cli'),
  );
  return command;
}

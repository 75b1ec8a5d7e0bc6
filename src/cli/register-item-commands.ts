import type { Command } from 'commander';
import { collect } from './collect-option.js';
import { lazyAction } from './lazy-action.js';
import {
  connectionOptions,
  detachOption,
  hiddenAlias,
  payloadOption,
  projectOption,
} from './shared-options.js';

/**
 * Registers the item commands (`search`, `load`, `execute`, `sign`) and `keys init|list|trust|revoke`:
 * their options and help only; each loads its command's module when it runs.
 */
export function registerItemCommands(program: Command): void {
  projectOption(
    program
      .command('search')
      .description(
        'Search directives, tools and knowledge in every space (ranked; typos forgiven).',
      )
      .argument(
        '[query...]',
        'words (all must match), AND, OR, NOT or -word, (…), "a phrase", prefix*, name: title: description: category: tags: content: id:',
      )
      .option('-k, --kind <kind>', 'directive, tool or knowledge (repeatable)', collect, [])
      .option('-s, --space <space>', 'project, user or system (repeatable)', collect, [])
      .option('--category <category>', 'only this category, or one below it')
      .option('-t, --tag <tag>', 'only items with this tag (repeatable: all of them)', collect, [])
      .option('--version <range>', 'only versions in this semver range, e.g. ">=1.2 <2"')
      .option('--from <date>', 'only items dated on or after (ISO date)')
      .option('--to <date>', 'only items dated on or before (ISO date)')
      .option(
        '--signature <state>',
        'verified, untrusted, unsigned, tampered, forged or builtin (repeatable)',
        collect,
        [],
      )
      .option('--no-shadowed', 'leave out items hidden by one of the same id in a higher space')
      .option('--sort <by>', 'score (default), date or name')
      .option('--limit <n>', 'results per page, 1 to 100', '10')
      .option('--offset <n>', 'results to skip', '0'),
  )
    .option('--json', 'print the page of results as JSON')
    .action(lazyAction(async () => (await import('./item-commands.js')).searchCommand));
  projectOption(
    program
      .command('load')
      .description('Print an item (verified first), or copy it into the project or user space.')
      .argument('<item_type>', 'directive, tool or knowledge')
      .argument('<item_id>', 'the item id, e.g. deploy/release')
      .option('--from <space>', 'read it from this space only (project, user or system)')
      .option('--to <space>', 'copy it into this space (project or user), signature intact')
      .option('--force', 'replace a different item already at the destination'),
  )
    .option('--json', 'print the item (content, metadata, signature) as JSON')
    .action(lazyAction(async () => (await import('./item-commands.js')).loadCommand));

  const execute = program
    .command('execute')
    .description('Run a tool or a directive, or read a knowledge entry.')
    .argument('<item_type>', 'directive, tool or knowledge')
    .argument('<item_id>', 'the item id')
    .option('--params <json|@file>', "a tool's parameters or a directive's inputs as a JSON object")
    .option('--dry-run', 'check only: resolve, verify and validate the parameters')
    .option('--run-id <id>', "a directive's waiting run to answer instead of starting one");
  payloadOption(execute).option(
    '--signal <name>',
    'with --run-id: which waiting step to answer (default: the first)',
  );
  detachOption(execute);
  // The names `execute` took before the options had one name across commands.
  hiddenAlias(execute, '--answer <json>', 'payload');
  hiddenAlias(execute, '--async', 'detach');
  connectionOptions(execute, { embedded: true })
    .option('--json', 'print the outcome as JSON')
    .action(lazyAction(async () => (await import('./item-commands.js')).executeCommand));

  projectOption(
    program
      .command('sign')
      .description(
        'Validate and sign items with your signing key (a glob signs every item it matches).',
      )
      .argument('<item_type>', 'directive, tool or knowledge')
      .argument('<item_id>', 'the item id, or a glob of item ids such as "demo/*"')
      .option('--space <space>', 'project or user', 'project'),
  )
    .option('--json', 'print the outcome as JSON')
    .action(lazyAction(async () => (await import('./sign-command.js')).signCommand));
  const keys = program.command('keys').description('Your signing key and the keys spaces trust.');
  projectOption(
    keys
      .command('init')
      .description('Make your signing key and trust it in your user space.')
      .option('--owner <name>', 'who the key belongs to (default: your user name)')
      .option('--force', 'replace the signing key you have'),
  )
    .option('--json', 'print as JSON')
    .action(lazyAction(async () => (await import('./keys-command.js')).keysInitCommand));
  projectOption(
    keys.command('list').description('Show your signing key and the trusted keys of every space.'),
  )
    .option('--json', 'print as JSON')
    .action(lazyAction(async () => (await import('./keys-command.js')).keysListCommand));
  projectOption(
    keys
      .command('trust')
      .description("Trust a public key (a PEM, or RYE's trusted-key TOML; - reads standard input).")
      .argument('<file>', 'public_key.pem, a .toml key file, or -')
      .option('--owner <name>', "who the key belongs to (default: the file's owner)")
      .option('--space <space>', 'user or project', 'user'),
  )
    .option('--json', 'print as JSON')
    .action(lazyAction(async () => (await import('./keys-command.js')).keysTrustCommand));
  projectOption(
    keys
      .command('revoke')
      .description('Stop trusting a key (its files in the project and user spaces, or in --space).')
      .argument('<keyId>', 'the key id keys list shows (or its first 8 or more characters)')
      .option('--space <space>', 'project or user (default: both)'),
  )
    .option('--json', 'print as JSON')
    .action(lazyAction(async () => (await import('./keys-command.js')).keysRevokeCommand));
}

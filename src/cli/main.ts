#!/usr/bin/env node
/** The `dirigent` command. */
import { Command } from 'commander';
import {
  cancelCommand,
  runCommand,
  runsCommand,
  signalCommand,
  statusCommand,
} from './run-command.js';
import { toolCreateCommand } from './tool-create-command.js';
import { toolRunCommand, toolShowCommand } from './tool-command.js';
import { graphCommand, validateCommand } from './validate-command.js';
import { exitCli, metricsEndpoint, startCliTelemetry } from './cli-telemetry.js';

const collect = (value: string, previous: string[]) => [...previous, value];

// A reader that stops early (`dirigent run … | head -1`) closes the pipe: that is not an error.
// The command goes on (a run still finishes, and its status is still the exit status), silently.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.stdout.write = (() => true) as typeof process.stdout.write;
});

const program = new Command()
  .name('dirigent')
  .enablePositionalOptions()
  .description('Run RYE directives as durable state machines.')
  .showHelpAfterError()
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
  // Telemetry starts before any command does anything (a worker's --metrics-port is one more
  // Prometheus reader); every command ends through exitCli, which flushes it.
  .hook('preAction', async (_program, command) => {
    const { metricsPort, metricsHost } = command.opts<{
      metricsPort?: string;
      metricsHost?: string;
    }>();
    await startCliTelemetry(metricsEndpoint(metricsPort, metricsHost, '--metrics-port'));
  });

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
  .action(async (target: string, opts) => await exitCli(await runCommand(target, opts)));

program
  .command('signal')
  .description('Send a signal to a waiting run and print its outcome as `run` does.')
  .argument('<runId>')
  .argument('<name>', 'signal name (the waiting step, or its <wait signal>)')
  .option('--payload <json>', "the step's result (JSON, or a plain string)")
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print the run record as JSON')
  .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
  .action(
    async (runId: string, name: string, opts) =>
      await exitCli(await signalCommand(runId, name, opts)),
  );

program
  .command('cancel')
  .description('Cancel a run (a waiting one, or with Redis any run, stopping its tools).')
  .argument('<runId>')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print the run record as JSON')
  .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
  .action(async (runId: string, opts) => await exitCli(await cancelCommand(runId, opts)));

program
  .command('status')
  .description("Print a run's record.")
  .argument('<runId>')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print the run record as JSON')
  .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
  .action(async (runId: string, opts) => await exitCli(await statusCommand(runId, opts)));

program
  .command('runs')
  .description('List runs, newest first.')
  .option(
    '--status <status>',
    'only runs with this status (running, waiting, completed, failed, cancelled)',
  )
  .option('--directive <item_id>', 'only runs of this directive')
  .option('--limit <n>', 'at most this many (default 50)')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print a JSON array of run records')
  .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
  .action(async (opts) => await exitCli(await runsCommand(opts)));

program
  .command('worker')
  .description('Serve run and tool jobs from Redis until SIGTERM (then drain and exit).')
  .option('--concurrency <n>', 'tool jobs at once in this process (default 8)')
  .option('--queues <list>', 'runs, tools, triggers (any of them)', 'runs,tools,triggers')
  .option('--redis <url>', 'Redis URL (default: $REDIS_URL)')
  .option(
    '--prefix <prefix>',
    'key prefix of the deployment (default: $DIRIGENT_PREFIX or dirigent)',
  )
  .option(
    '-p, --project <dir>',
    'the project served: directives and tools resolve in it (default: $DIRIGENT_PROJECT or the current folder)',
  )
  .option('--metrics-port <port>', 'serve Prometheus metrics on this port (/metrics)')
  .option('--metrics-host <host>', 'the address the metrics endpoint listens on', '127.0.0.1')
  .action(
    async (opts) => await exitCli(await (await import('./worker-command.js')).workerCommand(opts)),
  );

program
  .command('serve')
  .description('Serve the HTTP API (runs, directives, events) until SIGTERM (then close and exit).')
  .option('--port <port>', 'the port to listen on (0: any free one)', '8080')
  .option('--host <host>', 'the address to listen on', '127.0.0.1')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
  .option(
    '--prefix <prefix>',
    'key prefix of the deployment (default: $DIRIGENT_PREFIX or dirigent)',
  )
  .option('--no-auth', 'serve without bearer tokens (anyone who reaches the port may run)')
  .option(
    '--tokens-file <file>',
    'API tokens, one a line (# comments); also $DIRIGENT_API_TOKENS, comma-separated',
  )
  .option(
    '--rate-limit <n>',
    'requests a minute per token (per address with --no-auth); 0: none',
    '600',
  )
  .option('--body-limit <bytes>', "largest request body (default: the project's limits + 64 KiB)")
  .option('--full-access', 'let clients run tools directly, copy and sign items (/v1/items, /mcp)')
  .action(
    async (opts) => await exitCli(await (await import('./serve-command.js')).serveCommand(opts)),
  );

program
  .command('validate')
  .description('Check directives without running them.')
  .argument('<files...>')
  .option('--json', 'print the results as JSON')
  .action((files: string[], opts) => exitCli(validateCommand(files, opts)));

const tool = program.command('tool').description('Work with tools directly.');
tool
  .command('run')
  .description('Run one tool with parameters and print its result.')
  .argument('<item_id>', 'the tool, e.g. dirigent/util/echo')
  .option('--params <json|@file>', 'the parameters as a JSON object, or @file holding one')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print {ok, result} or {ok, error} as JSON')
  .action(async (itemId: string, opts) => await exitCli(await toolRunCommand(itemId, opts)));
tool
  .command('create')
  .description('Validate a new tool, write it into a space and register it in enabled.json.')
  .argument('<item_id>', 'where the tool goes, e.g. text/shout (→ .ai/tools/text/shout.py)')
  .option('--file <path>', 'read the source from this file (its extension decides the format)')
  .option('--code <source>', 'the source itself')
  .option('--ext <ext>', 'the format of --code: .py (default), .ts, .mjs, .js, .yaml')
  .option('--space <space>', 'project or user', 'project')
  .option('--force', 'replace a tool the space already has')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print the outcome as JSON')
  .action(async (itemId: string, opts) => await exitCli(await toolCreateCommand(itemId, opts)));
tool
  .command('show')
  .description('Show which file a tool resolves to, what it shadows, and its executor chain.')
  .argument('<item_id>')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print as JSON')
  .action(async (itemId: string, opts) => await exitCli(await toolShowCommand(itemId, opts)));

const itemCommands = () => import('./item-commands.js');
program
  .command('search')
  .description('Search directives, tools and knowledge in every space (ranked; typos forgiven).')
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
  .option('--offset <n>', 'results to skip', '0')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print the page of results as JSON')
  .action(async (query: string[], opts) =>
    exitCli(await (await itemCommands()).searchCommand(query, opts)),
  );
program
  .command('load')
  .description('Print an item (verified first), or copy it into the project or user space.')
  .argument('<item_type>', 'directive, tool or knowledge')
  .argument('<item_id>', 'the item id, e.g. deploy/release')
  .option('--from <space>', 'read it from this space only (project, user or system)')
  .option('--to <space>', 'copy it into this space (project or user), signature intact')
  .option('--force', 'replace a different item already at the destination')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print the item (content, metadata, signature) as JSON')
  .action(async (itemType: string, itemId: string, opts) =>
    exitCli(await (await itemCommands()).loadCommand(itemType, itemId, opts)),
  );
program
  .command('execute')
  .description('Run a tool or a directive, or read a knowledge entry.')
  .argument('<item_type>', 'directive, tool or knowledge')
  .argument('<item_id>', 'the item id')
  .option('--params <json|@file>', "a tool's parameters or a directive's inputs as a JSON object")
  .option('--dry-run', 'check only: resolve, verify and validate the parameters')
  .option('--run-id <id>', "a directive's waiting run to answer instead of starting one")
  .option('--answer <json>', 'with --run-id: the answer (JSON, or plain text)')
  .option('--signal <name>', 'with --run-id: which waiting step to answer (default: the first)')
  .option('--async', 'a directive: print the run at once instead of waiting for it')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
  .option('--json', 'print the outcome as JSON')
  .action(async (itemType: string, itemId: string, opts) =>
    exitCli(await (await itemCommands()).executeCommand(itemType, itemId, opts)),
  );
program
  .command('mcp')
  .description('Serve the item interface (search, load, execute, sign) to agents over MCP.')
  .option('--http', 'serve streamable HTTP at /mcp instead of standard input and output')
  .option('--port <port>', 'with --http: the port (0: any free one)', '8090')
  .option('--host <host>', 'with --http: the address to listen on', '127.0.0.1')
  .option('--no-auth', 'with --http: serve without bearer tokens')
  .option('--tokens-file <file>', 'with --http: tokens, one a line; also $DIRIGENT_API_TOKENS')
  .option(
    '--full-access',
    'with --http: let clients run tools directly, copy and sign items (stdio clients always may)',
  )
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--redis <url>', 'run directives on a Redis deployment (default: $REDIS_URL)')
  .action(async (opts) => exitCli(await (await import('./mcp-command.js')).mcpCommand(opts)));

program
  .command('sign')
  .description(
    'Validate and sign items with your signing key (a glob signs every item it matches).',
  )
  .argument('<item_type>', 'directive, tool or knowledge')
  .argument('<item_id>', 'the item id, or a glob of item ids such as "demo/*"')
  .option('--space <space>', 'project or user', 'project')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print the outcome as JSON')
  .action(async (itemType: string, itemId: string, opts) =>
    exitCli(await (await import('./sign-command.js')).signCommand(itemType, itemId, opts)),
  );
const keys = program.command('keys').description('Your signing key and the keys spaces trust.');
const keysCommand = () => import('./keys-command.js');
keys
  .command('init')
  .description('Make your signing key and trust it in your user space.')
  .option('--owner <name>', 'who the key belongs to (default: your user name)')
  .option('--force', 'replace the signing key you have')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print as JSON')
  .action(async (opts) => exitCli(await (await keysCommand()).keysInitCommand(opts)));
keys
  .command('list')
  .description('Show your signing key and the trusted keys of every space.')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print as JSON')
  .action(async (opts) => exitCli(await (await keysCommand()).keysListCommand(opts)));
keys
  .command('trust')
  .description("Trust a public key (a PEM, or RYE's trusted-key TOML; - reads standard input).")
  .argument('<file>', 'public_key.pem, a .toml key file, or -')
  .option('--owner <name>', "who the key belongs to (default: the file's owner)")
  .option('--space <space>', 'user or project', 'user')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print as JSON')
  .action(async (file: string, opts) =>
    exitCli(await (await keysCommand()).keysTrustCommand(file, opts)),
  );
keys
  .command('revoke')
  .description('Stop trusting a key (its files in the project and user spaces, or in --space).')
  .argument('<keyId>', 'the key id keys list shows (or its first 8 or more characters)')
  .option('--space <space>', 'project or user (default: both)')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print as JSON')
  .action(async (keyId: string, opts) =>
    exitCli(await (await keysCommand()).keysRevokeCommand(keyId, opts)),
  );

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
).action(async (directive: string, opts) =>
  exitCli(await (await import('./trigger-commands.js')).scheduleAddCommand(directive, opts)),
);
deployment(schedule.command('list').description('List the schedules.')).action(async (opts) =>
  exitCli(await (await import('./trigger-commands.js')).scheduleListCommand(opts)),
);
deployment(schedule.command('remove').description('Remove a schedule.').argument('<id>')).action(
  async (id: string, opts) =>
    exitCli(await (await import('./trigger-commands.js')).scheduleRemoveCommand(id, opts)),
);
deployment(
  schedule
    .command('sync')
    .description("Register the schedules the project's directives declare (workers do at start)."),
).action(async (opts) =>
  exitCli(await (await import('./trigger-commands.js')).scheduleSyncCommand(opts)),
);

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
  .option('--id <id>', 'the batch id (default: from the directive and the inputs file)')
  .option('--detach', 'go on in a process of its own; print the batch id')
  .option(
    '--progress-every <s>',
    'without a terminal: a progress line every this many seconds (default 10)',
  )
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print the summary as JSON')
  .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
  .action(async (directive: string, opts) =>
    exitCli(await (await import('./batch-command.js')).batchCommand(directive, opts)),
  );
batch
  .command('resume')
  .description(
    'Resume a batch where it stopped (inputs done are skipped, runs under way waited for).',
  )
  .argument('<id>')
  .option('--retry-failed', 'run again the inputs that failed')
  .option('--concurrency <n>', 'runs under way at once')
  .option('--progress-every <s>', 'without a terminal: a progress line every this many seconds')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print the summary as JSON')
  .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
  .action(async (id: string, opts) =>
    exitCli(await (await import('./batch-command.js')).batchResumeCommand(id, opts)),
  );
batch
  .command('status')
  .description("How a batch stands: its state and its results' counts.")
  .argument('<id>')
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--json', 'print as JSON')
  .action(async (id: string, opts) =>
    exitCli(await (await import('./batch-command.js')).batchStatusCommand(id, opts)),
  );

program
  .command('emit')
  .description('Send an event: every directive with <on event="…"> runs once per event id.')
  .argument('<event>', 'the event name, e.g. order.created')
  .option('--payload <json|@file>', 'the payload: a JSON object (the runs\' input "event")')
  .option('--id <id>', "the event's id (default: a new one); the same id starts no second run")
  .option('-p, --project <dir>', 'project directory', process.cwd())
  .option('--redis <url>', 'run on a Redis deployment (default: $REDIS_URL; embedded without)')
  .option('--json', 'print JSON')
  .action(async (event: string, opts) =>
    exitCli(await (await import('./trigger-commands.js')).emitCommand(event, opts)),
  );

program
  .command('graph')
  .description('Print the compiled machine of a directive as a Mermaid diagram.')
  .argument('<file>')
  .action((file: string) => exitCli(graphCommand(file)));

await program.parseAsync();

#!/usr/bin/env node
/**
 * The `dirigent` command. This module only registers the commands, their options and their help
 * (commander); a command's module, and what it needs (the engine, BullMQ, fastify…), is loaded
 * when that command runs (`lazy-action.ts`), so `dirigent --help` and `dirigent --version` start
 * as fast as Node does, and an embedded `dirigent run` loads no Redis client.
 */
import { Command } from 'commander';
import { DIRIGENT_VERSION } from '../package-info.js';
import { registerBatchCommands } from './register-batch-commands.js';
import { registerItemCommands } from './register-item-commands.js';
import { registerRunCommands } from './register-run-commands.js';
import { registerServerCommands } from './register-server-commands.js';
import { registerToolCommands } from './register-tool-commands.js';
import { registerTriggerCommands } from './register-trigger-commands.js';

// A reader that stops early (`dirigent run … | head -1`) closes the pipe: that is not an error.
// The command goes on (a run still finishes, and its status is still the exit status), silently.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.stdout.write = (() => true) as typeof process.stdout.write;
});

const program = new Command()
  .name('dirigent')
  .version(DIRIGENT_VERSION, '-V, --version', "print Dirigent's version")
  .enablePositionalOptions()
  .description('Run RYE directives as durable state machines.')
  .showHelpAfterError()
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
  // Telemetry starts before any command does anything (a worker's --metrics-port is one more
  // Prometheus reader); every command ends through exitProcess, which flushes it.
  .hook('preAction', async (_program, command) => {
    const { metricsPort, metricsHost } = command.opts<{
      metricsPort?: string;
      metricsHost?: string;
    }>();
    const { metricsEndpoint, startProcessTelemetry } = await import(
      '../telemetry/process-telemetry.js'
    );
    let prometheus;
    try {
      prometheus = metricsEndpoint(metricsPort, metricsHost, '--metrics-port');
    } catch (err) {
      process.stderr.write(`${(err as Error).message}\n`);
      process.exit(2);
    }
    await startProcessTelemetry(prometheus);
  });

registerRunCommands(program);
registerServerCommands(program);
registerToolCommands(program);
registerItemCommands(program);
registerTriggerCommands(program);
registerBatchCommands(program);

// Not awaited at the top level: the bundle (`scripts/bundle.mjs`) is CommonJS, which has no
// top-level await. A command's failure still ends the process (an unhandled rejection exits 1).
void program.parseAsync();

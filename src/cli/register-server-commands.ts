import type { Command } from 'commander';
import { lazyAction } from './lazy-action.js';
import { connectionOptions } from './shared-options.js';

/**
 * Registers `worker`, `serve` and `mcp`: their options and help only; each loads its command's
 * module (BullMQ, fastify, the MCP SDK) when it runs.
 */
export function registerServerCommands(program: Command): void {
  connectionOptions(
    program
      .command('worker')
      .description(
        "Serve a deployment's run, tool and trigger jobs until SIGTERM (then drain and exit).",
      )
      .option('--concurrency <n>', 'tool jobs at once in this process (default 8)')
      .option('--queues <list>', 'runs, tools, triggers (any of them)', 'runs,tools,triggers'),
    { embedded: false },
  )
    .option('--metrics-port <port>', 'serve Prometheus metrics on this port (/metrics)')
    .option('--metrics-host <host>', 'the address the metrics endpoint listens on', '127.0.0.1')
    .action(lazyAction(async () => (await import('./worker-command.js')).workerCommand));

  connectionOptions(
    program
      .command('serve')
      .description(
        'Serve the HTTP API (runs, directives, events) until SIGTERM (then close and exit).',
      )
      .option('--port <port>', 'the port to listen on (0: any free one)', '8080')
      .option('--host <host>', 'the address to listen on', '127.0.0.1'),
    { embedded: true },
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
    .option(
      '--full-access',
      'let clients run tools directly, copy and sign items (/v1/items, /mcp)',
    )
    .action(lazyAction(async () => (await import('./serve-command.js')).serveCommand));

  connectionOptions(
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
      ),
    { embedded: true },
  ).action(lazyAction(async () => (await import('./mcp-command.js')).mcpCommand));
}

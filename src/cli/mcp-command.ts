/**
 * `dirigent mcp`: the MCP server (src/mcp) on one project, for agents: over stdio (what Claude
 * Desktop, Cursor and most clients start), or with `--http` over streamable HTTP at `/mcp` on
 * 127.0.0.1, with the API's bearer tokens, until SIGTERM or SIGINT.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BearerAuth } from '../api/bearer-auth.js';
import { errorBodyOf } from '../api/error-body-of.js';
import { DirigentError } from '../errors/dirigent-error.js';
import type { Dirigent } from '../operations/dirigent.js';
import { mcpHttpHandler, serveMcpStdio } from '../mcp/item-mcp-server.js';
import { apiTokensOption } from './api-tokens-option.js';
import { withDirigent, type CommonOptions } from './run-command.js';
import { whole } from './serve-command.js';
import { noRoute, unauthorized } from '../errors/request-errors.js';
import { IdleSockets } from '../api/idle-sockets.js';

/** Options of `dirigent mcp`. */
export interface McpOptions extends CommonOptions {
  http?: boolean;
  port: string;
  host: string;
  /** False with `--no-auth`. */
  auth: boolean;
  tokensFile?: string;
  /** Let HTTP clients run tools directly, copy and sign items (stdio clients always may). */
  fullAccess?: boolean;
}

const say = (line: string) => process.stderr.write(`${line}\n`);

/** See the module comment. Exit 0 when the client (stdio) or a signal (HTTP) ends it; 2 for bad options. */
export async function mcpCommand(opts: McpOptions): Promise<number> {
  if (!opts.http)
    return withDirigent(opts, async (dirigent) => {
      await serveMcpStdio(dirigent);
      return 0;
    });
  const port = whole(opts.port, '--port', 0, 65535);
  if (port === undefined) return 2;
  const tokens = apiTokensOption('mcp', opts);
  if (tokens === undefined) return 2;
  return withDirigent(opts, (dirigent) =>
    serveHttp(dirigent, port, opts.host, tokens, opts.fullAccess === true),
  );
}

async function serveHttp(
  dirigent: Dirigent,
  port: number,
  host: string,
  tokens: string[] | false,
  fullAccess: boolean,
): Promise<number> {
  const auth = tokens === false ? undefined : new BearerAuth(tokens);
  let handle = mcpHttpHandler(dirigent, { fullAccess });
  const server = createServer((req, res) => {
    void answer(req, res).catch((err: unknown) => refuse(res, DirigentError.from(err), 500));
  });
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/mcp') return refuse(res, noRoute(path, 'The MCP endpoint is /mcp.'), 404);
    if (auth !== undefined && auth.check(req.headers.authorization) === undefined)
      return refuse(res, unauthorized(req.headers.authorization !== undefined), 401);
    await handle(req, res);
  };
  const fresh = new IdleSockets(server);
  // A client's stream of server messages (a GET) carries no work: it ends when the server closes.
  const streams = new Set<ServerResponse>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET') return;
    streams.add(res);
    res.once('close', () => streams.delete(res));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
  } catch (err) {
    say(`dirigent mcp cannot listen on ${host}:${port}: ${(err as Error).message}`);
    return 1;
  }
  const bound = (server.address() as AddressInfo).port;
  const loopback = ['127.0.0.1', 'localhost', '::1'].includes(host);
  // A browser page must not reach a loopback server through a name that resolves to it.
  if (loopback)
    handle = mcpHttpHandler(dirigent, {
      fullAccess,
      allowedHosts: [`127.0.0.1:${bound}`, `localhost:${bound}`, `[::1]:${bound}`],
    });
  say(
    `dirigent mcp ${process.pid}: listening on http://${host.includes(':') ? `[${host}]` : host}:${bound}/mcp (project ${dirigent.projectDir}, ${tokens === false ? 'no authentication' : `${tokens.length} token${tokens.length === 1 ? '' : 's'}`})`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  say(`dirigent mcp ${process.pid}: closing`);
  // Connections that carry no request, or only a stream, end now; a call under way gets a
  // moment to answer, then its connection ends too.
  server.closeIdleConnections();
  fresh.destroy();
  for (const res of streams) res.end();
  const grace = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  clearTimeout(grace);
  return 0;
}

/** How long a stream still open when the server closes may go on before it is ended. */
const CLOSE_GRACE_MS = 2000;

function refuse(res: ServerResponse, error: DirigentError, status: number): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(errorBodyOf(error)));
}

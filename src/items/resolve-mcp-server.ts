/** The `${VAR}` expansion of an MCP server's connection settings, done at call time. */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { McpServerDefinition } from './mcp-server-definition.js';

/** An MCP server with every `${VAR}` of its connection settings expanded (see {@link resolveMcpServer}). */
export type ResolvedMcpServer = McpServerDefinition;

/**
 * The server with `${VAR}` and `${VAR:-default}` expanded from `env` in its url, headers, command,
 * args, env and cwd (as RYE's connect.py does). A variable that is unset and has no default is a
 * fatal `MISSING_SECRET`: a silently empty token would only fail later, less clearly.
 */
export function resolveMcpServer(
  server: McpServerDefinition,
  env: Record<string, string>,
): ResolvedMcpServer {
  const x = (value: string, key: string) => expandVars(value, env, server, key);
  const xMap = (map: Record<string, string>, key: string) =>
    Object.fromEntries(Object.entries(map).map(([k, v]) => [k, x(v, `${key}.${k}`)]));
  if (server.transport === 'http') {
    return { ...server, url: x(server.url, 'url'), headers: xMap(server.headers, 'headers') };
  }
  return {
    ...server,
    command: x(server.command, 'command'),
    args: server.args.map((a, i) => x(a, `args[${i}]`)),
    env: xMap(server.env, 'env'),
    cwd: server.cwd === undefined ? undefined : x(server.cwd, 'cwd'),
  };
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function expandVars(
  value: string,
  env: Record<string, string>,
  server: McpServerDefinition,
  key: string,
): string {
  return value.replace(VAR, (_m, name: string, fallback: string | undefined) => {
    const v = env[name];
    if (v !== undefined) return v;
    if (fallback !== undefined) return fallback;
    throw DirigentError.fatal(
      ErrorCode.MISSING_SECRET,
      `MCP server "${server.name}" needs the environment variable ${name} (in config.${key} of ${server.file}), which is not set.`,
      {
        location: { file: server.file, line: 1, column: 1 },
        hint: `Set ${name} (in the project's .env or the environment), or write \${${name}:-default}.`,
        details: { variable: name, server: server.name },
      },
    );
  });
}

/**
 * The MCP server (official SDK): exactly four tools, `search`, `load`, `execute` and `sign`, on
 * one project's operations, over stdio or streamable HTTP. A tool's failure is an MCP tool error
 * (`isError`) carrying the engine's code, message and hint; the server itself never fails on a
 * call.
 *
 * ```ts
 * const dirigent = await Dirigent.open({ project: '.' });
 * await serveMcpStdio(dirigent); // resolves when the client disconnects
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { DirigentError } from '../errors/dirigent-error.js';
import type { Dirigent } from '../operations/dirigent.js';
import { callItemTool, type ItemToolAccess } from './call-item-tool.js';
import { ITEM_TOOLS } from './item-tool-schemas.js';
import { DIRIGENT_VERSION } from '../package-info.js';

/** A server for one connection, answering from `dirigent`'s item operations. */
export function createItemMcpServer(dirigent: Dirigent, access: ItemToolAccess = {}): Server {
  const server = new Server(
    { name: 'dirigent', title: 'Dirigent', version: DIRIGENT_VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        'Dirigent runs directives (workflows), tools and knowledge entries of one project. Use search to find items, load to read or copy one, execute to run it (a directive that waits on an instruction answers with its run_id: execute again with run_id and your answer), and sign to validate and sign items.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: ITEM_TOOLS.map(({ name, title, description, inputSchema, annotations }) => ({
      name,
      title,
      description,
      inputSchema,
      annotations,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    toolResult(() =>
      callItemTool(dirigent, request.params.name, request.params.arguments ?? {}, access),
    ),
  );
  return server;
}

/** Runs a call and turns its answer or its error into a tool result. */
async function toolResult(call: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    const answer = await call();
    return {
      content: [{ type: 'text', text: JSON.stringify(answer, null, 2) }],
      structuredContent: answer,
    };
  } catch (err) {
    const e = DirigentError.from(err);
    const problems = e.details?.problems;
    const error = {
      code: e.code,
      message: e.message,
      ...(e.hint !== undefined && { hint: e.hint }),
      ...(e.location !== undefined && { location: e.location }),
      // Every problem of an answer or of inputs that were refused, one by one.
      ...(Array.isArray(problems) && { problems }),
    };
    return {
      isError: true,
      content: [{ type: 'text', text: e.describe() }],
      structuredContent: { error },
    };
  }
}

/**
 * Serves one client over stdin and stdout until it disconnects (stdin ends). Nothing else may
 * write to stdout meanwhile.
 */
export async function serveMcpStdio(dirigent: Dirigent): Promise<void> {
  const server = createItemMcpServer(dirigent);
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  await server.connect(new StdioServerTransport());
  await closed;
}

/** What {@link mcpHttpHandler} takes. */
export interface McpHttpOptions extends ItemToolAccess {
  /**
   * The `Host` header values accepted (DNS rebinding protection for servers on loopback); every
   * host when omitted.
   */
  allowedHosts?: string[];
}

/**
 * A handler of MCP's streamable HTTP transport, stateless: each request gets its own server
 * and transport, so any number of clients (and servers behind a balancer) work alike.
 * `body` is the parsed JSON body when the caller has read it already.
 */
export function mcpHttpHandler(
  dirigent: Dirigent,
  options: McpHttpOptions = {},
): (req: IncomingMessage, res: ServerResponse, body?: unknown) => Promise<void> {
  return async (req, res, body) => {
    const server = createItemMcpServer(dirigent, options);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      ...(options.allowedHosts && {
        enableDnsRebindingProtection: true,
        allowedHosts: options.allowedHosts,
      }),
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
}

/**
 * The item interface over HTTP: `POST /v1/items/{search,load,execute,sign}` with the MCP tools'
 * arguments as the body and their answers as the response, and MCP itself (streamable HTTP,
 * stateless) at `/mcp`. Both behind the API's tokens; running tools directly, copying and
 * signing need `--full-access`.
 */
import type { FastifyInstance } from 'fastify';
import { callItemTool } from '../mcp/call-item-tool.js';
import { ITEM_TOOLS } from '../mcp/item-tool-schemas.js';
import { mcpHttpHandler } from '../mcp/item-mcp-server.js';
import type { ApiContext } from './api-context.js';
import { errorResponses } from './api-schemas.js';

/** Registers the item routes and `/mcp` on `app`. */
export function itemRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { dirigent, fullAccess } = ctx;
  for (const tool of ITEM_TOOLS)
    app.post<{ Body: Record<string, unknown> }>(
      `/v1/items/${tool.name}`,
      {
        bodyLimit: tool.name === 'execute' ? ctx.bodyLimits.inputs : ctx.bodyLimits.small,
        schema: {
          operationId: `${tool.name}Items`,
          tags: ['items'],
          summary: tool.title,
          description: tool.description,
          body: tool.inputSchema,
          response: {
            200: { type: 'object', additionalProperties: true },
            ...errorResponses(400, 403, 404, 409, 413, 415, 422),
          },
        },
      },
      (request) => callItemTool(dirigent, tool.name, request.body, { fullAccess }),
    );
  const mcp = mcpHttpHandler(dirigent, { fullAccess });
  for (const method of ['GET', 'POST', 'DELETE'] as const)
    app.route({
      method,
      url: '/mcp',
      schema: { hide: true },
      handler: async (request, reply) => {
        reply.hijack();
        await mcp(request.raw, reply.raw, request.body);
      },
    });
}

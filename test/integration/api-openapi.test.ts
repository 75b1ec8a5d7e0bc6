/**
 * The OpenAPI document at `/openapi.json`, made from the route schemas: a valid OpenAPI 3
 * document (checked by @readme/openapi-parser) that names every route the server has.
 */
import { validate } from '@readme/openapi-parser';
import { expect, it } from 'vitest';
import { apiClient, apiServers } from '../support/api-server.js';

const servers = apiServers();

/** The routes of `printRoutes()`'s tree, as `METHOD /path` (HEAD routes left out). */
function routesOf(tree: string): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    for (const method of (m[3] ?? '').split(', ').filter((x) => x && x !== 'HEAD'))
      out.push(`${method} ${stack.join('')}`);
  }
  return out;
}

it('serves a valid OpenAPI 3 document that names every route', async () => {
  const { url, app } = await servers.listen({ project: servers.project() });
  const res = await apiClient(url, null).get('/openapi.json');
  expect(res.status).toBe(200);
  const doc = res.body;
  expect(doc.openapi).toMatch(/^3\./);
  const result = await validate(structuredClone(doc));
  expect(result.valid, JSON.stringify(result)).toBe(true);
  // The validator does refuse what is not OpenAPI: a response without its description.
  const broken = structuredClone(doc);
  delete broken.paths['/healthz'].get.responses['200'].description;
  expect((await validate(broken)).valid).toBe(false);

  const routes = routesOf(app.printRoutes({ commonPrefix: false }));
  expect(routes).toContain('POST /v1/runs/:runId/signals/:name');
  const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(
    ([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
  );
  // MCP's own transport at /mcp is described by MCP, not by this document; the console's page
  // and files (/, /runs/…, /directives…, /console/…) are not the API's.
  const expected = routes
    .filter((r) => / \/(v1\/|healthz|readyz)/.test(r))
    .map((r) => r.replace(/:(\w+)/g, '{$1}'));
  expect(documented.sort()).toEqual(expected.sort());
  // probes (2), info, runs (6), the console's runs (3), events, directives (2), batches (3), items
  // (4), operating runs (8: redrive, rerun, bulk, pauses, pause and resume, of one directive too)
  expect(expected).toHaveLength(30);
  expect(routes).toEqual(expect.arrayContaining(['POST /mcp', 'GET /mcp', 'DELETE /mcp']));

  // Runs take a bearer token; the probes do not.
  expect(doc.components.securitySchemes.bearerAuth).toEqual({ type: 'http', scheme: 'bearer' });
  expect(doc.security).toEqual([{ bearerAuth: [] }]);
  expect(doc.paths['/healthz'].get.security).toEqual([]);
  // Every error response is the one error shape.
  const start = doc.paths['/v1/runs'].post;
  expect(Object.keys(start.responses)).toEqual(
    expect.arrayContaining(['200', '201', '202', '400', '401', '404', '409', '413', '422', '429']),
  );
  expect(start.responses['422'].content['application/json'].schema).toEqual({
    $ref: '#/components/schemas/ErrorResponse',
  });
  expect(doc.paths['/v1/runs/{runId}/cancel'].post.requestBody.required).toBe(false);
  expect(doc.paths['/v1/runs/{runId}/events'].get.responses['200'].content).toHaveProperty(
    'text/event-stream',
  );
});

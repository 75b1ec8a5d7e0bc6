/**
 * docs/http-api.md's reference is the one the API's own OpenAPI document gives: adding a route, a
 * parameter or an error code without `npm run docs:http` fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  formatPage,
  HTTP_API_MARKERS,
  HTTP_API_PAGE,
  httpApiReference,
  openApiDocument,
  withHttpApiReference,
} from '../../scripts/http-api-doc.mjs';
import { buildApi } from '../../src/api/build-api.js';
import { httpStatusOf } from '../../src/api/http-status.js';
import { ErrorCode } from '../../src/errors/error-codes.js';
import { Dirigent } from '../../src/operations/dirigent.js';

describe('docs/http-api.md', () => {
  it('holds the reference generated from the OpenAPI document (npm run docs:http)', async () => {
    const doc = await openApiDocument({ Dirigent, buildApi });
    const page = readFileSync(HTTP_API_PAGE, 'utf8');
    const reference = httpApiReference(doc, httpStatusOf, Object.values(ErrorCode));
    const expected = await formatPage(withHttpApiReference(page, reference));
    expect(page, 'docs/http-api.md differs from the routes: run npm run docs:http').toBe(expected);

    // Not vacuous: the reference names every route of the document, and the page holds it.
    const routes = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(routes).toContain('POST /v1/runs');
    for (const route of routes) expect(page).toContain(`#### \`${route}\``);
    expect(page.indexOf(HTTP_API_MARKERS.begin)).toBeGreaterThan(-1);
  });

  it('tells a stale page apart: a route taken away changes the reference', async () => {
    const doc = await openApiDocument({ Dirigent, buildApi });
    const fewer = structuredClone(doc) as { paths: Record<string, unknown> };
    delete fewer.paths['/v1/events'];
    const codes = Object.values(ErrorCode);
    expect(httpApiReference(fewer, httpStatusOf, codes)).not.toBe(
      httpApiReference(doc, httpStatusOf, codes),
    );
    expect(httpApiReference(fewer, httpStatusOf, codes)).not.toContain('POST /v1/events');
  });

  it('names the status of every error code', async () => {
    const doc = await openApiDocument({ Dirigent, buildApi });
    const reference = httpApiReference(doc, httpStatusOf, Object.values(ErrorCode));
    expect(reference).toContain('| 404 |');
    expect(reference).toMatch(/\| 409 \|[^\n]*`RUN_ENDED`/);
    expect(reference).toMatch(/\| 503 \|[^\n]*`REDIS_UNAVAILABLE`/);
  });
});

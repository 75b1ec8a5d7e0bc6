import { DIRIGENT_VERSION } from '../../package-info.js';
import { DirigentError, ErrorCode } from '../../errors/index.js';
import { FETCH_PARAMS } from '../fetch-params.js';
import { decodeBody, isTextual } from '../decode-body.js';
import { httpStatusError } from '../http-status-error.js';
import { loadNetworkPolicy } from '../network-policy.js';
import type { ToolDefinition } from '../tool-definition.js';
import type { ToolExample } from '../tool-example.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
/** Headers the tool sets itself, or that would let a value choose where the request goes. */
const FORBIDDEN_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
]);
const ALLOW_LOCAL = 'hosts: ["127.0.0.1"]\nprivate: ["127.0.0.1"]\n';

const EXAMPLES: ToolExample[] = [
  {
    description: 'a JSON answer, parsed, from a host the project allows (a local test server)',
    files: { '.ai/config/network.yaml': ALLOW_LOCAL },
    serve: { '/api/version': { type: 'application/json', body: '{"version":"2.1.0"}' } },
    input: { url: 'http://{server}/api/version' },
    output: {
      status: 200,
      body: { version: '2.1.0' },
      content_type: 'application/json',
      redirects: [],
    },
  },
  {
    description: 'a host the project does not list is refused before any connection',
    input: { url: 'http://example.com/' },
    error: { code: 'NETWORK_DENIED', retryable: false },
  },
  {
    description: 'a listed host on a private address the project has not opened is refused',
    files: { '.ai/config/network.yaml': 'hosts: ["127.0.0.1"]\n' },
    serve: { '/': { body: 'internal' } },
    input: { url: 'http://{server}/' },
    error: { code: 'PRIVATE_ADDRESS', retryable: false },
  },
];

/**
 * `dirigent/http/fetch`: one HTTP request (`url`, `method`, `headers`, `body`: a string, or JSON
 * for anything else) to a host the project allows in `.ai/config/network.yaml`, never to a private
 * address it has not opened there (both checked again at every redirect, the address as DNS gives
 * it: `NETWORK_DENIED`, `PRIVATE_ADDRESS`). At most `max_redirects` redirects are followed
 * (`TOO_MANY_REDIRECTS`, `REDIRECT_LOOP`), `max_bytes` of body read (`RESPONSE_TOO_LARGE`), all
 * within `timeout` seconds (a retryable `HTTP_TIMEOUT`). The result holds the final `url`,
 * `status`, `headers`, and the `body` as `response_type` says (`auto`: JSON parsed, text decoded
 * in its charset, anything else base64). A status of 400 or more is an `HTTP_FAILED` (retryable
 * for 408, 425, 429 and 5xx) unless `fail_on_status` is false.
 */
export const httpFetchTool: ToolDefinition = {
  itemId: 'dirigent/http/fetch',
  description: 'Makes an HTTP request to a host the project allows.',
  paramsSchema: {
    type: 'object',
    properties: {
      url: FETCH_PARAMS.url,
      method: { type: 'string', enum: METHODS, default: 'GET' },
      headers: {
        type: 'object',
        propertyNames: { pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$" },
        additionalProperties: { type: 'string' },
      },
      body: { description: 'A string is sent as it is; anything else as JSON.' },
      response_type: { type: 'string', enum: ['auto', 'text', 'json', 'base64'], default: 'auto' },
      timeout: FETCH_PARAMS.timeout,
      max_bytes: { type: 'integer', minimum: 1, maximum: 33554432, default: 1048576 },
      max_redirects: FETCH_PARAMS.max_redirects,
      fail_on_status: {
        type: 'boolean',
        default: true,
        description: 'A status of 400 or more fails.',
      },
    },
    required: ['url'],
    additionalProperties: false,
  },
  examples: EXAMPLES,
  async execute(params, ctx) {
    const method = params.method as string;
    const headers = requestHeaders(
      params.headers as Record<string, string> | undefined,
      ctx.traceparent,
    );
    let body: Buffer | undefined;
    if (params.body !== undefined) {
      if (method === 'GET' || method === 'HEAD') {
        throw DirigentError.fatal(ErrorCode.INVALID_PARAMS, `a ${method} request has no body`, {
          hint: 'Leave out body, or set method to POST, PUT or PATCH.',
        });
      }
      const json = typeof params.body !== 'string';
      body = Buffer.from(json ? JSON.stringify(params.body) : (params.body as string));
      if (json) headers['content-type'] ??= 'application/json';
    }
    // Loaded on the first request: node's http, https, zlib and dns cost a CLI start-up ~40 ms.
    const { guardedFetch } = await import('../guarded-fetch.js');
    const res = await guardedFetch(
      {
        url: params.url as string,
        method,
        headers,
        ...(body !== undefined && { body }),
        maxRedirects: params.max_redirects as number,
        maxBytes: params.max_bytes as number,
        timeoutMs: (params.timeout as number) * 1000,
        signal: ctx.signal,
        label: 'dirigent/http/fetch',
      },
      loadNetworkPolicy(ctx.projectDir),
    );
    const contentType = res.headers['content-type'] ?? '';
    if (res.status >= 400 && params.fail_on_status !== false)
      throw httpStatusError(
        'dirigent/http/fetch',
        res.url,
        res.status,
        res.statusText,
        decodeBody(res.body, contentType),
      );
    return {
      url: res.url,
      status: res.status,
      status_text: res.statusText,
      headers: res.headers,
      content_type: contentType,
      body: bodyAs(params.response_type as string, res.body, contentType),
      bytes: res.body.length,
      redirects: res.redirects,
    };
  },
};

/** The request's headers, lowercased, with the tool's own and the trace context added. */
function requestHeaders(
  given: Record<string, string> | undefined,
  traceparent: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(given ?? {})) headers[k.toLowerCase()] = v;
  const forbidden = Object.keys(headers).filter(
    (k) => FORBIDDEN_HEADERS.has(k) || k.startsWith('proxy-'),
  );
  if (forbidden.length > 0) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_PARAMS,
      `headers may not set ${forbidden.join(', ')}`,
      {
        hint: `Leave ${forbidden.join(', ')} out of headers: the tool sets them from url and body.`,
      },
    );
  }
  headers['user-agent'] ??= `Dirigent/${DIRIGENT_VERSION}`;
  if (traceparent !== undefined) headers.traceparent ??= traceparent;
  return headers;
}

function bodyAs(type: string, body: Buffer, contentType: string): unknown {
  if (type === 'base64') return body.toString('base64');
  const json = /[/+]json\b/i.test(contentType);
  if (type === 'json' || (type === 'auto' && json)) {
    const text = decodeBody(body, contentType);
    try {
      return text === '' ? null : (JSON.parse(text) as unknown);
    } catch {
      if (type === 'auto') return text;
      throw DirigentError.fatal(
        ErrorCode.UNSUPPORTED_CONTENT,
        `the response is not JSON (${contentType || 'no content type'})`,
        {
          hint: 'Set response_type to text (or auto).',
        },
      );
    }
  }
  if (type === 'text' || isTextual(contentType) || contentType === '')
    return decodeBody(body, contentType);
  return body.toString('base64');
}

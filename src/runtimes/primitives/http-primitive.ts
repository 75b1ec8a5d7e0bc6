/**
 * RYE's `rye/core/primitives/http_client`: calls `config.url` with `method`, `headers`, `body`
 * (JSON-encoded unless a string) and `auth` (`bearer` token or `api_key` in a header), within
 * `timeout` seconds (default 30) and the call's abort signal. A 2xx or 3xx status is a success and
 * returns `{status_code, body, headers}` (the body parsed when it is JSON); 408, 425, 429 and 5xx
 * statuses and network errors are retryable failures, other statuses fatal. The request carries
 * the call's `traceparent` header (W3C trace context) unless `headers` sets one.
 */
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { abortError } from '../../tools/abort-error.js';
import { httpStatusError } from '../../tools/http-status-error.js';
import type { PrimitiveCall } from '../primitive.js';
import { requestFailed } from '../../errors/runtime-errors.js';
import { callTimedOut } from '../../errors/stop-errors.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Bytes of a failing response's body kept in the error. */
const ERROR_BODY_CHARS = 1000;

/** Performs the configured request. */
export async function httpPrimitive(call: PrimitiveCall): Promise<unknown> {
  const { config } = call;
  const label = `tool ${call.itemId}`;
  const url = parseUrl(label, config.url);
  const method = String(config.method ?? 'GET').toUpperCase();
  const headers = new Headers();
  for (const [k, v] of Object.entries(asObject(config.headers))) headers.set(k, String(v));
  const auth = asObject(config.auth);
  if (auth.type === 'bearer') headers.set('authorization', `Bearer ${String(auth.token ?? '')}`);
  if (auth.type === 'api_key')
    headers.set(String(auth.header ?? 'X-API-Key'), String(auth.key ?? ''));
  // W3C trace context propagation, so that a traced server's spans join the run's trace. A tool
  // that sets the header itself (another value, or an empty one) keeps its own.
  if (call.traceparent !== undefined && !headers.has('traceparent')) {
    headers.set('traceparent', call.traceparent);
  }
  let body: string | undefined;
  if (config.body !== undefined && BODY_METHODS.has(method)) {
    body = typeof config.body === 'string' ? config.body : JSON.stringify(config.body);
    if (typeof config.body !== 'string' && !headers.has('content-type')) {
      headers.set('content-type', 'application/json');
    }
  }
  const timeoutMs = Math.min(
    call.timeoutMs,
    typeof config.timeout === 'number' ? config.timeout * 1000 : 30_000,
  );
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([call.signal, timeout]);
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method,
      headers,
      ...(body !== undefined && { body }),
      signal,
      redirect: 'follow',
    });
    text = await response.text();
  } catch (err) {
    if (call.signal.aborted) throw abortError(call.signal, label);
    if (timeout.aborted) {
      throw callTimedOut(`${label}: ${method} ${url.origin}${url.pathname}`, timeoutMs, {
        hint: 'Raise config.timeout (seconds) of the tool, or check the endpoint.',
      });
    }
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (err as Error).message;
    throw requestFailed(`${label}: ${method} ${url.origin}${url.pathname}`, reason, { cause: err });
  }
  const parsed = parseBody(text, response.headers.get('content-type'));
  const status = response.status;
  if (status >= 200 && status < 400) {
    return { status_code: status, body: parsed, headers: Object.fromEntries(response.headers) };
  }
  throw httpStatusError(
    label,
    `${method} ${url.origin}${url.pathname}`,
    status,
    response.statusText,
    text,
    {
      fatalHint: 'Check the parameters and credentials of the request.',
      details: {
        status_code: status,
        body: typeof parsed === 'string' ? parsed.slice(0, ERROR_BODY_CHARS) : parsed,
      },
    },
  );
}

function parseUrl(label: string, value: unknown): URL {
  try {
    const url = new URL(String(value));
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {
    // reported below
  }
  throw DirigentError.fatal(
    ErrorCode.INVALID_TOOL,
    `${label}: config.url "${String(value)}" is not an http(s) URL.`,
    {
      hint: 'Set config.url to an absolute http:// or https:// URL; ${VAR} and {param} are filled in.',
    },
  );
}

function parseBody(text: string, contentType: string | null): unknown {
  if (text === '' || !(contentType ?? '').includes('json')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function asObject(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : {};
}

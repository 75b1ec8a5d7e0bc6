/**
 * An HTTP(S) request on behalf of a tool, kept to where the project allows: every URL (the first
 * and each redirect's) must be http(s) on a host of the project's network policy, and every
 * address a connection goes to, the one DNS gave (checked in the connection's own lookup, so a
 * name cannot resolve to one address when checked and another when used) or the one written in
 * the URL, must be public or opened by the policy. Redirects are followed by hand, a bounded
 * number of times, loops refused; the body is read up to a size cap (after decompression, so a
 * small compressed body cannot fill memory); the whole exchange has one deadline.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { pipeline, type Readable } from 'node:stream';
import { DirigentError, ErrorCode } from '../errors/index.js';
import { abortError } from './abort-error.js';
import { checkAddress } from './check-address.js';
import { allowsHost, NETWORK_POLICY_FILE, type NetworkPolicy } from './network-policy.js';
import { requestFailed } from '../errors/runtime-errors.js';

/** A request as the web tools make it. */
export interface GuardedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Redirects followed at most; 0 returns a redirect's response as it is. */
  maxRedirects: number;
  /** Bytes of (decompressed) body read at most. */
  maxBytes: number;
  timeoutMs: number;
  signal: AbortSignal;
  /** Names the tool in messages. */
  label: string;
}

/** What came back. */
export interface GuardedResponse {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: Buffer;
  /** The URLs redirected to, in order. */
  redirects: string[];
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers a redirect to another origin does not carry on. */
const CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization'];

/** Makes `req` within `policy`; see the module comment. */
export async function guardedFetch(
  req: GuardedRequest,
  policy: NetworkPolicy,
): Promise<GuardedResponse> {
  const timeout = AbortSignal.timeout(req.timeoutMs);
  const signal = AbortSignal.any([req.signal, timeout]);
  let url = parseUrl(req.url);
  let method = req.method;
  let body = req.body;
  const headers = { ...req.headers };
  const redirects: string[] = [];
  const seen = new Set<string>();
  try {
    for (;;) {
      checkUrl(url, policy, redirects.length > 0);
      if (seen.has(url.href)) {
        throw DirigentError.fatal(
          ErrorCode.REDIRECT_LOOP,
          `${req.label}: the redirects of ${req.url} come back to ${url.href}`,
          {
            hint: 'Set url to the page the loop was meant to reach, or report the loop to the site.',
            details: { redirects },
          },
        );
      }
      seen.add(url.href);
      const res = await send(url, method, headers, body, policy, signal);
      const location = res.headers.location;
      if (REDIRECTS.has(res.statusCode ?? 0) && location !== undefined && req.maxRedirects > 0) {
        res.resume();
        if (redirects.length >= req.maxRedirects) {
          throw DirigentError.fatal(
            ErrorCode.TOO_MANY_REDIRECTS,
            `${req.label}: ${req.url} redirected more than ${req.maxRedirects} times`,
            {
              hint: 'Raise max_redirects, or set url to where the redirects lead.',
              details: { redirects },
            },
          );
        }
        const next = new URL(location, url);
        if (next.origin !== url.origin) for (const h of CREDENTIALS) delete headers[h];
        // 303 always, and 301/302 after a POST, go on as GET without a body (as browsers do).
        if (
          res.statusCode === 303 ||
          ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')
        ) {
          method = 'GET';
          body = undefined;
          delete headers['content-type'];
        }
        redirects.push(next.href);
        url = next;
        continue;
      }
      return {
        url: url.href,
        status: res.statusCode ?? 0,
        statusText: res.statusMessage ?? '',
        headers: flatHeaders(res),
        body: await readBody(res, req.maxBytes, req.label, url),
        redirects,
      };
    }
  } catch (err) {
    if (req.signal.aborted) throw abortError(req.signal, `${req.label}: ${method} ${url.href}`);
    if (timeout.aborted) {
      throw DirigentError.retryable(
        ErrorCode.HTTP_TIMEOUT,
        `${req.label}: ${method} ${url.href} took longer than ${req.timeoutMs / 1000} s`,
        {
          hint: 'Raise timeout, or try again later.',
          details: { redirects },
        },
      );
    }
    if (err instanceof DirigentError) throw err;
    const e = err as NodeJS.ErrnoException;
    throw requestFailed(`${req.label}: ${method} ${url.href}`, e.code ?? e.message, {
      details: { code: e.code },
      cause: err,
    });
  }
}

function parseUrl(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw DirigentError.fatal(
      ErrorCode.INVALID_PARAMS,
      `url ${JSON.stringify(text)} is not a URL`,
      {
        hint: 'Set url to an absolute http:// or https:// URL.',
      },
    );
  }
}

/** Refuses a URL the policy does not allow (its scheme, its host, an IP literal's address). */
function checkUrl(url: URL, policy: NetworkPolicy, redirected: boolean): void {
  const where = redirected ? 'a redirect leads to' : 'url is';
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw DirigentError.fatal(
      ErrorCode.NETWORK_DENIED,
      `${where} ${url.href}, which is not http or https`,
      {
        hint: 'Set url to an http:// or https:// URL.',
      },
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw DirigentError.fatal(
      ErrorCode.INVALID_PARAMS,
      `${where} ${url.origin} with credentials in it`,
      {
        hint: 'Pass credentials in headers (authorization), not in url.',
      },
    );
  }
  if (!allowsHost(policy, url)) {
    throw DirigentError.fatal(
      ErrorCode.NETWORK_DENIED,
      `${where} ${url.href}, on host ${url.host}, which the project does not allow its web tools`,
      {
        hint:
          policy.file === undefined
            ? `Set url to an allowed host; the project allows none until ${NETWORK_POLICY_FILE} lists hosts.`
            : `Set url to a host listed in ${NETWORK_POLICY_FILE}, or add ${url.hostname} to its hosts.`,
        details: { host: url.host },
      },
    );
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) checkAddress(host, host, policy);
}

/** One request, its connection's addresses checked as DNS gives them. */
function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  policy: NetworkPolicy,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      try {
        for (const a of addresses) checkAddress(a.address, host, policy);
      } catch (refusal) {
        return callback(refusal as NodeJS.ErrnoException, '', 0);
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
  const out: OutgoingHttpHeaders = { 'accept-encoding': 'gzip, deflate, br', ...headers };
  if (body !== undefined) out['content-length'] = body.length;
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: out, lookup, signal, agent: false }, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

function flatHeaders(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers))
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** The response body, decompressed, refused past `max` bytes. */
async function readBody(
  res: IncomingMessage,
  max: number,
  label: string,
  url: URL,
): Promise<Buffer> {
  const tooLarge = (size: string) =>
    DirigentError.fatal(
      ErrorCode.RESPONSE_TOO_LARGE,
      `${label}: the response of ${url.href} is larger than max_bytes (${max} bytes; ${size})`,
      {
        hint: 'Raise max_bytes, or fetch a smaller resource.',
        details: { max_bytes: max },
      },
    );
  const declared = Number(res.headers['content-length']);
  const encoding = (res.headers['content-encoding'] ?? '').toLowerCase();
  if (encoding === '' && declared > max) {
    res.destroy();
    throw tooLarge(`it announces ${declared}`);
  }
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  // pipeline, not pipe: an aborted response ends the decoder with the same error.
  const stream: Readable = decoder === undefined ? res : pipeline(res, decoder, () => undefined);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream) {
      total += (chunk as Buffer).length;
      if (total > max) throw tooLarge('it sent more');
      chunks.push(chunk as Buffer);
    }
  } finally {
    if (total > max || !res.complete) res.destroy();
  }
  return Buffer.concat(chunks, total);
}

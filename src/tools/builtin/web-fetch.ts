import { DIRIGENT_VERSION } from '../../package-info.js';
import { DirigentError, ErrorCode } from '../../errors/index.js';
import { FETCH_PARAMS } from '../fetch-params.js';
import { capText } from '../cap-text.js';
import { decodeBody, isTextual } from '../decode-body.js';
import { htmlToReadable } from '../html-to-readable.js';
import { httpStatusError } from '../http-status-error.js';
import { loadNetworkPolicy } from '../network-policy.js';
import type { ToolDefinition } from '../tool-definition.js';
import type { ToolExample } from '../tool-example.js';

const PAGE =
  '<html><head><title>Release 2.1</title><script>track()</script></head>' +
  '<body><h1>Release 2.1</h1><p>Faster <b>loops</b>; see <a href="/notes">the notes</a>.</p></body></html>';
const NETWORK = { '.ai/config/network.yaml': 'hosts: ["127.0.0.1"]\nprivate: ["127.0.0.1"]\n' };

const EXAMPLES: ToolExample[] = [
  {
    description: 'a page as Markdown (scripts dropped), from a host the project allows',
    files: NETWORK,
    serve: { '/release': { type: 'text/html; charset=utf-8', body: PAGE } },
    input: { url: 'http://{server}/release' },
    output: {
      status: 200,
      title: 'Release 2.1',
      format: 'markdown',
      content: '# Release 2.1\n\nFaster **loops**; see [the notes](/notes).',
      truncated: false,
    },
  },
  {
    description: 'the same page as plain text, after a redirect',
    files: NETWORK,
    serve: {
      '/latest': { status: 302, headers: { location: 'http://{server}/release' } },
      '/release': { type: 'text/html', body: PAGE },
    },
    input: { url: 'http://{server}/latest', format: 'text' },
    output: {
      url: 'http://{server}/release',
      content: 'Release 2.1\nFaster loops; see the notes.',
    },
  },
  {
    description: 'an image is not a page to read',
    files: NETWORK,
    serve: { '/logo.png': { type: 'image/png', body: 'PNG' } },
    input: { url: 'http://{server}/logo.png' },
    error: { code: 'UNSUPPORTED_CONTENT', retryable: false },
  },
];

/**
 * `dirigent/web/fetch`: a web page as readable text: `markdown` (default; through
 * node-html-markdown), `text`, or the `html` itself; scripts, styles and other non-text elements
 * are dropped, and the page's `title` is given. Text that is not HTML (plain text, Markdown, JSON)
 * comes back as it is; other content (images, archives) is `UNSUPPORTED_CONTENT`. The request is
 * `dirigent/http/fetch`'s GET, under the same network policy, redirects, `max_bytes` and
 * `timeout`; `content` holds at most `max_chars` characters (`truncated` says when it was cut).
 * RYE's `rye/web/webfetch` parameters (`url`, `format`, `timeout`) are this tool's.
 */
export const webFetchTool: ToolDefinition = {
  itemId: 'dirigent/web/fetch',
  description: 'Fetches a web page as Markdown or plain text.',
  paramsSchema: {
    type: 'object',
    properties: {
      url: FETCH_PARAMS.url,
      format: { type: 'string', enum: ['markdown', 'text', 'html'], default: 'markdown' },
      timeout: FETCH_PARAMS.timeout,
      max_bytes: {
        type: 'integer',
        minimum: 1,
        maximum: 33554432,
        default: 4194304,
        description: 'Bytes of page read at most.',
      },
      max_chars: {
        type: 'integer',
        minimum: 1,
        maximum: 4194304,
        default: 100000,
        description: 'Characters of content returned at most.',
      },
      max_redirects: FETCH_PARAMS.max_redirects,
    },
    required: ['url'],
    additionalProperties: false,
  },
  examples: EXAMPLES,
  async execute(params, ctx) {
    const label = 'dirigent/web/fetch';
    // Loaded on the first request: node's http, https, zlib and dns cost a CLI start-up ~40 ms.
    const { guardedFetch } = await import('../guarded-fetch.js');
    const res = await guardedFetch(
      {
        url: params.url as string,
        method: 'GET',
        headers: {
          accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5',
          'user-agent': `Dirigent/${DIRIGENT_VERSION}`,
          ...(ctx.traceparent !== undefined && { traceparent: ctx.traceparent }),
        },
        maxRedirects: params.max_redirects as number,
        maxBytes: params.max_bytes as number,
        timeoutMs: (params.timeout as number) * 1000,
        signal: ctx.signal,
        label,
      },
      loadNetworkPolicy(ctx.projectDir),
    );
    const contentType = res.headers['content-type'] ?? '';
    const text = decodeBody(res.body, contentType);
    if (res.status >= 400) throw httpStatusError(label, res.url, res.status, res.statusText, text);
    const html =
      /html/i.test(contentType) || (contentType === '' && /^\s*<(!doctype html|html)/i.test(text));
    if (!html && !isTextual(contentType) && contentType !== '') {
      throw DirigentError.fatal(
        ErrorCode.UNSUPPORTED_CONTENT,
        `${label}: ${res.url} is ${contentType}, not a page to read`,
        {
          hint: 'Set url to a web page, or fetch this with dirigent/http/fetch (response_type base64).',
          details: { content_type: contentType },
        },
      );
    }
    const format = params.format as 'markdown' | 'text' | 'html';
    const page =
      html && format !== 'html'
        ? htmlToReadable(text, format)
        : { title: undefined, content: text };
    const content = capText(page.content, params.max_chars as number);
    return {
      url: res.url,
      status: res.status,
      content_type: contentType,
      format,
      ...(page.title !== undefined && { title: page.title }),
      content: content.text,
      bytes: res.body.length,
      truncated: content.truncated,
    };
  },
};

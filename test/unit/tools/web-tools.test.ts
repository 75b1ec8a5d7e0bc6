/**
 * dirigent/http/fetch and dirigent/web/fetch against HTTP servers this test starts on
 * 127.0.0.1. Those are on loopback, a private address: the project's `.ai/config/network.yaml`
 * opens 127.0.0.1 explicitly for the cases that must reach them, and the refusals are shown
 * without that allowance: by name (`localhost` resolving to loopback), by redirect, by address.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuiltinDispatcher } from '../../../src/tools/builtin-dispatcher.js';
import { makeCall, rejection, withTempDir } from './helpers.js';

/** What the echo route answers. */
type Echoed = { method: string; body: string; headers: Record<string, string | undefined> };
type Route = (req: IncomingMessage, res: ServerResponse, body: string) => void;
const servers: Server[] = [];
let origin = '';
let other = '';

/** A server on a free port of 127.0.0.1 answering `routes`; its origin. */
async function serve(routes: Record<string, Route>): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () =>
      (routes[new URL(req.url!, 'http://x').pathname] ?? ((_q, r) => r.writeHead(404).end('no')))(
        req,
        res,
        body,
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const redirect =
  (to: () => string, status = 302): Route =>
  (_q, res) =>
    res.writeHead(status, { location: to() }).end();
const echo: Route = (req, res, body) =>
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ method: req.method, headers: req.headers, body }));

beforeAll(async () => {
  other = await serve({ '/echo': echo });
  origin = await serve({
    '/json': (_q, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
    '/echo': echo,
    '/gzip': (_q, res) =>
      res
        .writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' })
        .end(gzipSync('squeezed')),
    '/loop-a': redirect(() => `${origin}/loop-b`),
    '/loop-b': redirect(() => `${origin}/loop-a`),
    '/chain': (req, res) => {
      const n = Number(new URL(req.url!, 'http://x').searchParams.get('n') ?? 0);
      res.writeHead(302, { location: `/chain?n=${n + 1}` }).end();
    },
    '/to-localhost': redirect(() => origin.replace('127.0.0.1', 'localhost') + '/json'),
    '/to-127-0-0-2': redirect(() => origin.replace('127.0.0.1', '127.0.0.2') + '/json'),
    '/to-other': redirect(() => `${other}/echo`, 307),
    '/see-other': redirect(() => `${origin}/echo`, 303),
    '/announced-huge': (_q, res) =>
      res.writeHead(200, { 'content-length': String(50 * 1024 * 1024) }).end(),
    '/streamed-huge': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = 'x'.repeat(64 * 1024);
      let sent = 0;
      const more = () => {
        while (sent < 80 && res.write(chunk)) sent++;
        if (sent < 80) res.once('drain', more);
        else res.end();
      };
      res.on('close', () => (sent = 80));
      more();
    },
    '/bomb': (_q, res) =>
      res
        .writeHead(200, { 'content-encoding': 'gzip' })
        .end(gzipSync(Buffer.alloc(20 * 1024 * 1024))),
    '/slow-headers': (_q, res) =>
      void setTimeout(() => res.writeHead(200).end('late'), 3000).unref(),
    '/slow-body': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('start');
      const timer = setInterval(() => res.write('.'), 100);
      res.on('close', () => clearInterval(timer));
    },
    '/unavailable': (_q, res) => res.writeHead(503).end('down for maintenance'),
    '/missing': (_q, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('gone'),
    '/latin1': (_q, res) =>
      res
        .writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1' })
        .end(Buffer.from('<title>Caf\xe9</title><p>cr\xe8me br\xfbl\xe9e</p>', 'latin1')),
    '/plain': (_q, res) =>
      res.writeHead(200, { 'content-type': 'text/markdown' }).end('# Notes\n\n- one\n'),
    '/article': (_q, res) =>
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<html><body><h2>Long</h2><p>${'word '.repeat(500)}</p></body></html>`),
  });
});

afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A project whose network.yaml is `policy` (none when undefined); `call` runs a tool in it. */
function withPolicy(
  policy: string | undefined,
  fn: (
    call: (
      itemId: string,
      params: Record<string, unknown>,
      signal?: AbortSignal,
    ) => Promise<Record<string, unknown>>,
  ) => Promise<void>,
) {
  return withTempDir(async (dir) => {
    const project = await realpath(dir);
    if (policy !== undefined) {
      await mkdir(join(project, '.ai', 'config'), { recursive: true });
      await writeFile(join(project, '.ai', 'config', 'network.yaml'), policy);
    }
    const dispatcher = new BuiltinDispatcher();
    await fn(
      (itemId, params, signal) =>
        dispatcher.dispatch(
          makeCall(itemId, params, { projectDir: project, ...(signal && { signal }) }),
        ) as Promise<Record<string, unknown>>,
    );
  });
}
const OPEN = 'hosts: ["127.0.0.1"]\nprivate: ["127.0.0.1"]\n';
const HTTP = 'dirigent/http/fetch';
const WEB = 'dirigent/web/fetch';

describe('refused: private addresses and hosts the project has not opened', () => {
  it('no network.yaml: no host at all', async () => {
    await withPolicy(undefined, async (call) => {
      const err = await rejection(call(HTTP, { url: `${origin}/json` }));
      expect(err).toMatchObject({ code: 'NETWORK_DENIED', retryable: false });
      expect(err.hint).toContain('.ai/config/network.yaml');
    });
  });

  it('a listed host on loopback, not opened under private: refused before a byte is sent', async () => {
    await withPolicy('hosts: ["127.0.0.1"]\n', async (call) => {
      const err = await rejection(call(HTTP, { url: `${origin}/json` }));
      expect(err).toMatchObject({
        code: 'PRIVATE_ADDRESS',
        details: { address: '127.0.0.1', range: 'loopback' },
      });
    });
  });

  it('the address a name resolves to is checked, not the name: localhost is loopback', async () => {
    await withPolicy('hosts: [localhost]\n', async (call) => {
      const err = await rejection(
        call(HTTP, { url: origin.replace('127.0.0.1', 'localhost') + '/json' }),
      );
      expect(err).toMatchObject({
        code: 'PRIVATE_ADDRESS',
        details: { host: 'localhost', range: 'loopback' },
      });
      expect(err.message).toContain('localhost resolves to it');
    });
  });

  it('every redirect is checked again: another host, and another private address', async () => {
    await withPolicy(OPEN, async (call) => {
      expect((await rejection(call(HTTP, { url: `${origin}/to-localhost` }))).code).toBe(
        'NETWORK_DENIED',
      );
    });
    await withPolicy('hosts: ["*"]\nprivate: ["127.0.0.1"]\n', async (call) => {
      const err = await rejection(call(HTTP, { url: `${origin}/to-127-0-0-2` }));
      expect(err).toMatchObject({ code: 'PRIVATE_ADDRESS', details: { address: '127.0.0.2' } });
    });
  });

  it('link-local, unspecified, IPv4-mapped and IPv4-compatible addresses are private too; only http(s) goes', async () => {
    await withPolicy('hosts: ["*"]\n', async (call) => {
      for (const url of [
        'http://169.254.169.254/latest/meta-data/',
        'http://0.0.0.0:1/',
        'http://[::ffff:127.0.0.1]:1/',
        'http://[::127.0.0.1]:1/',
        'http://[::a9fe:a9fe]/latest/meta-data/',
        'http://10.0.0.1/',
      ]) {
        expect((await rejection(call(HTTP, { url }))).code, url).toBe('PRIVATE_ADDRESS');
      }
      expect((await rejection(call(HTTP, { url: 'file:///etc/passwd' }))).code).toBe(
        'NETWORK_DENIED',
      );
    });
  });

  it('a malformed network.yaml is INVALID_CONFIG naming the setting', async () => {
    await withPolicy('hosts: [127.0.0.1]\nprivat: [127.0.0.1]\n', async (call) => {
      const err = await rejection(call(HTTP, { url: `${origin}/json` }));
      expect(err.code).toBe('INVALID_CONFIG');
      expect(err.message).toContain('"privat"');
    });
  });
});

describe('dirigent/http/fetch, with 127.0.0.1 opened', () => {
  it('GETs JSON, POSTs a JSON body, sends its user agent, and reads gzip', async () => {
    await withPolicy(OPEN, async (call) => {
      expect(await call(HTTP, { url: `${origin}/json` })).toMatchObject({
        status: 200,
        body: { ok: true },
        redirects: [],
      });
      const posted = (
        await call(HTTP, {
          url: `${origin}/echo`,
          method: 'POST',
          body: { a: 1 },
          headers: { 'X-Id': '7' },
        })
      ).body as Echoed;
      expect(posted).toMatchObject({
        method: 'POST',
        body: '{"a":1}',
        headers: { 'content-type': 'application/json', 'x-id': '7' },
      });
      expect(posted.headers['user-agent']).toMatch(/^Dirigent\//);
      expect(await call(HTTP, { url: `${origin}/gzip` })).toMatchObject({
        body: 'squeezed',
        bytes: 8,
      });
    });
  });

  it('bounds redirects: a loop is refused at once, a long chain at max_redirects', async () => {
    await withPolicy(OPEN, async (call) => {
      const loop = await rejection(call(HTTP, { url: `${origin}/loop-a` }));
      expect(loop).toMatchObject({ code: 'REDIRECT_LOOP', retryable: false });
      const chain = await rejection(call(HTTP, { url: `${origin}/chain`, max_redirects: 3 }));
      expect(chain).toMatchObject({ code: 'TOO_MANY_REDIRECTS' });
      expect(chain.hint).toContain('max_redirects');
      expect(await call(HTTP, { url: `${origin}/chain`, max_redirects: 0 })).toMatchObject({
        status: 302,
      });
    });
  });

  it('drops credentials on a redirect to another origin; 303 goes on as GET without a body', async () => {
    await withPolicy(OPEN, async (call) => {
      const moved = (
        await call(HTTP, {
          url: `${origin}/to-other`,
          method: 'PUT',
          body: 'x',
          headers: { authorization: 'Bearer s3cret' },
        })
      ).body as Echoed;
      expect(moved).toMatchObject({ method: 'PUT', body: 'x' });
      expect(moved.headers.authorization).toBeUndefined();
      const seen = (await call(HTTP, { url: `${origin}/see-other`, method: 'POST', body: 'x' }))
        .body as Echoed;
      expect(seen).toMatchObject({ method: 'GET', body: '' });
    });
  });

  it('refuses bodies over max_bytes: announced, streamed, and compressed small but huge inside', async () => {
    await withPolicy(OPEN, async (call) => {
      for (const path of ['/announced-huge', '/streamed-huge', '/bomb']) {
        const err = await rejection(
          call(HTTP, { url: `${origin}${path}`, max_bytes: 1024 * 1024 }),
        );
        expect(err, path).toMatchObject({ code: 'RESPONSE_TOO_LARGE', retryable: false });
        expect(err.hint).toContain('max_bytes');
      }
    });
  });

  it('times out on slow headers and on a slow body (retryable), and stops on an abort', async () => {
    await withPolicy(OPEN, async (call) => {
      for (const path of ['/slow-headers', '/slow-body']) {
        const err = await rejection(call(HTTP, { url: `${origin}${path}`, timeout: 0.3 }));
        expect(err, path).toMatchObject({ code: 'HTTP_TIMEOUT', retryable: true });
      }
      const controller = new AbortController();
      const pending = call(HTTP, { url: `${origin}/slow-body` }, controller.signal);
      setTimeout(() => controller.abort(), 100);
      expect((await rejection(pending)).code).toBe('CANCELLED');
    });
  });

  it('a failing status is HTTP_FAILED, retryable for 503, fatal for 404, a result on request', async () => {
    await withPolicy(OPEN, async (call) => {
      expect(await rejection(call(HTTP, { url: `${origin}/unavailable` }))).toMatchObject({
        code: 'HTTP_FAILED',
        retryable: true,
        details: { status: 503 },
      });
      expect(await rejection(call(HTTP, { url: `${origin}/missing` }))).toMatchObject({
        code: 'HTTP_FAILED',
        retryable: false,
      });
      expect(await call(HTTP, { url: `${origin}/missing`, fail_on_status: false })).toMatchObject({
        status: 404,
        body: 'gone',
      });
    });
  });

  it('refuses headers that choose where the request goes, and a GET with a body', async () => {
    await withPolicy(OPEN, async (call) => {
      expect(
        (await rejection(call(HTTP, { url: `${origin}/json`, headers: { Host: 'internal' } })))
          .code,
      ).toBe('INVALID_PARAMS');
      expect((await rejection(call(HTTP, { url: `${origin}/json`, body: 'x' }))).code).toBe(
        'INVALID_PARAMS',
      );
    });
  });
});

describe('dirigent/web/fetch, with 127.0.0.1 opened', () => {
  it('decodes the charset the page names, gives its title, and passes plain text through', async () => {
    await withPolicy(OPEN, async (call) => {
      expect(await call(WEB, { url: `${origin}/latin1`, format: 'text' })).toMatchObject({
        title: 'Café',
        content: 'crème brûlée',
      });
      expect(await call(WEB, { url: `${origin}/plain` })).toMatchObject({
        content: '# Notes\n\n- one\n',
        format: 'markdown',
      });
    });
  });

  it('cuts content at max_chars and says so', async () => {
    await withPolicy(OPEN, async (call) => {
      const r = await call(WEB, { url: `${origin}/article`, max_chars: 100 });
      expect(r.truncated).toBe(true);
      expect((r.content as string).length).toBeLessThanOrEqual(100);
      expect(r.content).toMatch(/^## Long/);
    });
  });
});

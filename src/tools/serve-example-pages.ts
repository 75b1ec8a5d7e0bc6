/** A small HTTP server on 127.0.0.1 for the pages a tool example declares (`ToolExample.serve`). */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServedPage } from './tool-example.js';

/** A running server: `host` is `127.0.0.1:<port>`; `close` stops it. */
export interface ExampleServer {
  host: string;
  close(): Promise<void>;
}

/**
 * Serves `pages` (path → page) on a free port of 127.0.0.1; any other path answers 404. A page's
 * body may hold `{server}`, written as the server's `host:port` (for links and redirects).
 */
export async function serveExamplePages(pages: Record<string, ServedPage>): Promise<ExampleServer> {
  let host = '';
  const server: Server = createServer((req, res) => {
    const page = pages[new URL(req.url ?? '/', 'http://x').pathname];
    if (page === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const fill = (s: string) => s.replaceAll('{server}', host);
    const headers = Object.fromEntries(
      Object.entries(page.headers ?? {}).map(([k, v]) => [k, fill(v)]),
    );
    res
      .writeHead(page.status ?? 200, {
        'content-type': page.type ?? 'text/plain; charset=utf-8',
        ...headers,
      })
      .end(fill(page.body ?? ''));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    host,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

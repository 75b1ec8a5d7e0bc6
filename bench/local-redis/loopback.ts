/**
 * What the local Redis servers of the benchmarks and tests share: a free loopback port, and
 * waiting for a server on one to answer.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/** A loopback port no server listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once a Redis on `port` answers `PING`; throws after `timeoutMs`. */
export async function answers(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const probe = new Redis(port, '127.0.0.1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => undefined);
    const ok = await probe
      .connect()
      .then(() => probe.ping())
      .then(
        () => true,
        () => false,
      );
    probe.disconnect();
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Stops a server this process started (SIGTERM), and resolves once it has exited. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

import { spawn, type ChildProcess } from 'node:child_process';

/**
 * `node …argv` as a long-lived process, resolved once its stderr matches `ready` (with the match),
 * or rejected with its output when it exits first. The caller ends it.
 */
export function spawnServer(
  env: NodeJS.ProcessEnv,
  argv: string[],
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, argv, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((served, failed) => {
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = ready.exec(err);
      if (m) served({ child, match: m });
    });
    child.once('exit', (code) => failed(new Error(`${argv[1]} exited (${code}): ${err}`)));
  });
}

/** A console served: a worker and `dirigent serve` on Redis, both to be stopped by the caller. */
export interface ServedConsole {
  url: string;
  /** Ends both processes. */
  stop(): void;
}

/**
 * Starts a worker and `dirigent serve` (port chosen by the system, no rate limit) of `project`
 * with `cli` and `env` (REDIS_URL, DIRIGENT_PREFIX, DIRIGENT_API_TOKENS, …); resolves once both
 * are ready. When one fails to start, the other is ended and the failure thrown.
 */
export async function serveConsole(
  cli: string,
  project: string,
  env: NodeJS.ProcessEnv,
): Promise<ServedConsole> {
  const started = await Promise.allSettled([
    spawnServer(env, [cli, 'worker', '--project', project], /jobs from/),
    spawnServer(
      { ...env, DIRIGENT_LOG_LEVEL: 'warn' },
      [cli, 'serve', '--port', '0', '--project', project, '--rate-limit', '0'],
      /listening on (http:\/\/\S+)/,
    ),
  ]);
  const stop = () => {
    for (const s of started) if (s.status === 'fulfilled') s.value.child.kill('SIGKILL');
  };
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    stop();
    throw failed.reason;
  }
  const served = started[1] as PromiseFulfilledResult<Awaited<ReturnType<typeof spawnServer>>>;
  return { url: served.value.match[1]!, stop };
}

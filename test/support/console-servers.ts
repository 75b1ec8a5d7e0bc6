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

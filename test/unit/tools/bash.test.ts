import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DirigentError, ErrorCode } from '../../../src/errors/index.js';
import { BuiltinDispatcher } from '../../../src/tools/index.js';
import { waitFor } from '../../support/wait-for.js';
import { makeCall, rejection, withTempDir } from './helpers.js';

const dispatcher = new BuiltinDispatcher();
const BASH = 'dirigent/shell/bash';

/**
 * True while a live process of the group exists. Zombies (already dead, waiting for init to reap
 * them, which in some containers takes seconds) do not count.
 */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    expect((err as NodeJS.ErrnoException).code).toBe('ESRCH');
    return false;
  }
  const rows = execFileSync('ps', ['-eo', 'pgid=,stat='], { encoding: 'utf8' }).split('\n');
  return rows.some((row) => {
    const [group, state] = row.trim().split(/\s+/);
    return Number(group) === pgid && state !== undefined && !state.startsWith('Z');
  });
}

/** Waits for the command to write its pid (= its process group id) to `file`. */
async function pgidFrom(file: string): Promise<number> {
  const text = await waitFor(
    async () => {
      const written = await readFile(file, 'utf8').catch(() => '');
      return written.endsWith('\n') && written;
    },
    { what: `the command to write its pid to ${file}`, timeoutMs: 5000 },
  );
  return Number(text.trim());
}

describe('dirigent/shell/bash', () => {
  it('resolves stdout, stderr and exit_code, running in the project directory', async () => {
    await withTempDir(async (dir) => {
      const result = await dispatcher.dispatch(
        makeCall(BASH, { command: 'echo out; echo err >&2; pwd' }, { projectDir: dir }),
      );
      expect(result).toEqual({ stdout: `out\n${dir}\n`, stderr: 'err\n', exit_code: 0 });
    });
  });

  it('refuses env that would make bash run code at start-up (BASH_ENV, SHELLOPTS, …), running nothing', async () => {
    await withTempDir(async (dir) => {
      for (const env of [
        { BASH_ENV: '/dev/stdin' },
        { SHELLOPTS: 'xtrace', PS4: '$(touch PWNED)' },
        { LD_PRELOAD: '/tmp/x.so' },
      ]) {
        const err = await rejection(
          dispatcher.dispatch(makeCall(BASH, { command: 'touch ran', env }, { projectDir: dir })),
        );
        expect(err.code).toBe(ErrorCode.INVALID_PARAMS);
        expect(err.message).toContain('env may not set');
      }
      expect(existsSync(join(dir, 'ran'))).toBe(false);
      expect(existsSync(join(dir, 'PWNED'))).toBe(false);
    });
  });

  it('runs in working_dir, which must lie inside the project', async () => {
    await withTempDir(async (dir) => {
      await mkdir(join(dir, 'sub'));
      const result = (await dispatcher.dispatch(
        makeCall(BASH, { command: 'pwd', working_dir: 'sub' }, { projectDir: dir }),
      )) as { stdout: string };
      expect(result.stdout).toBe(`${join(dir, 'sub')}\n`);
      const outside = await rejection(
        dispatcher.dispatch(
          makeCall(BASH, { command: 'pwd', working_dir: '..' }, { projectDir: dir }),
        ),
      );
      expect(outside.code).toBe(ErrorCode.PATH_OUTSIDE_PROJECT);
      const missing = await rejection(
        dispatcher.dispatch(
          makeCall(BASH, { command: 'pwd', working_dir: 'nope' }, { projectDir: dir }),
        ),
      );
      expect(missing.code).toBe(ErrorCode.FILE_NOT_FOUND);
    });
  });

  it('fails a non-zero exit with a retryable COMMAND_FAILED holding the output', async () => {
    const err = await rejection(
      dispatcher.dispatch(
        makeCall(BASH, { command: 'echo partial; echo one >&2; echo two >&2; exit 3' }),
      ),
    );
    expect(err.code).toBe(ErrorCode.COMMAND_FAILED);
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('exited with code 3');
    expect(err.message).toContain('one\n  two');
    expect(err.details).toEqual({ stdout: 'partial\n', stderr: 'one\ntwo\n', exit_code: 3 });
  });

  it("quotes a failed command as the directive's author wrote it, not as bash was handed it", async () => {
    const err = await rejection(
      dispatcher.dispatch(
        makeCall(
          BASH,
          {},
          {
            templated: [
              {
                path: ['command'],
                texts: ["echo 'hi ", "'; exit 3"],
                labels: ['{input:customer}'],
                values: ['bob'],
              },
            ],
          },
        ),
      ),
    );
    expect(err.code).toBe(ErrorCode.COMMAND_FAILED);
    expect(err.message).toBe(
      `bash command "echo 'hi {input:customer}'; exit 3" exited with code 3`,
    );
    expect(err.message).not.toContain('DIRIGENT_V');
  });

  it('caps each stream at 1 MiB and says so', async () => {
    const result = (await dispatcher.dispatch(
      makeCall(BASH, { command: "head -c 1500000 /dev/zero | tr '\\0' a" }),
    )) as { stdout: string };
    expect(result.stdout.startsWith('a'.repeat(1024 * 1024))).toBe(true);
    expect(result.stdout).toMatch(
      /\n\[dirigent: stdout truncated at 1048576 bytes; 451424 more dropped\]$/,
    );
  });

  it('does not wait for a background child that holds the pipes after bash exits, and kills it', async () => {
    const start = Date.now();
    const result = (await dispatcher.dispatch(
      makeCall(BASH, { command: 'sleep 30 & echo $$' }),
    )) as { stdout: string };
    expect(Date.now() - start).toBeLessThan(5000);
    // The call is over: nothing it started is left running.
    expect(groupAlive(Number(result.stdout.trim()))).toBe(false);
  });

  it('kills the whole process group when the signal aborts, then rejects with the reason', async () => {
    await withTempDir(async (dir) => {
      const controller = new AbortController();
      const pending = dispatcher.dispatch(
        makeCall(
          BASH,
          { command: 'echo $$ > pid; sleep 30 & sleep 30' },
          { projectDir: dir, signal: controller.signal },
        ),
      );
      const pgid = await pgidFrom(join(dir, 'pid'));
      expect(groupAlive(pgid)).toBe(true);
      const reason = DirigentError.retryable(ErrorCode.STEP_TIMEOUT, 'step timed out');
      controller.abort(reason);
      expect(await rejection(pending)).toBe(reason);
      expect(groupAlive(pgid)).toBe(false);
    });
  });

  it('rejects with CANCELLED on a plain abort', async () => {
    await withTempDir(async (dir) => {
      const controller = new AbortController();
      const pending = dispatcher.dispatch(
        makeCall(
          BASH,
          { command: 'echo $$ > pid; sleep 30' },
          { projectDir: dir, signal: controller.signal },
        ),
      );
      const pgid = await pgidFrom(join(dir, 'pid'));
      controller.abort();
      expect((await rejection(pending)).code).toBe(ErrorCode.CANCELLED);
      expect(groupAlive(pgid)).toBe(false);
    });
  });

  it('on its own timeout kills the group, SIGKILL included, and rejects with retryable STEP_TIMEOUT', async () => {
    await withTempDir(async (dir) => {
      // The group ignores SIGTERM, so only the SIGKILL after the grace ends it.
      const pending = dispatcher.dispatch(
        makeCall(
          BASH,
          { command: 'trap "" TERM; echo $$ > pid; sleep 30 & sleep 30', timeout: '1' },
          { projectDir: dir },
        ),
      );
      const pgid = await pgidFrom(join(dir, 'pid'));
      const err = await rejection(pending);
      expect(err.code).toBe(ErrorCode.STEP_TIMEOUT);
      expect(err.retryable).toBe(true);
      expect(err.message).toContain('timed out after 1 s');
      expect(groupAlive(pgid)).toBe(false);
    });
  });
});

import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/errors/index.js';
import { BuiltinDispatcher } from '../../../src/tools/index.js';
import { makeCall, rejection, withTempDir } from './helpers.js';

const dispatcher = new BuiltinDispatcher();
const READ = 'dirigent/fs/read';
const WRITE = 'dirigent/fs/write';

/** A project directory and, beside it, a directory outside the project. */
function withProject(fn: (project: string, outside: string) => Promise<void>) {
  return withTempDir(async (dir) => {
    const project = join(dir, 'project');
    const outside = join(dir, 'outside');
    await mkdir(project);
    await mkdir(outside);
    await writeFile(join(outside, 'secret.txt'), 'secret');
    await fn(project, outside);
  });
}

describe('dirigent/fs/read and dirigent/fs/write', () => {
  it('round-trips a file, creating parent directories', async () => {
    await withProject(async (project) => {
      const written = await dispatcher.dispatch(
        makeCall(WRITE, { file_path: 'a/b/note.txt', content: 'héllo' }, { projectDir: project }),
      );
      expect(written).toEqual({ path: join(project, 'a/b/note.txt'), bytes: 6 });
      const read = await dispatcher.dispatch(
        makeCall(READ, { path: 'a/b/note.txt' }, { projectDir: project }),
      );
      expect(read).toEqual({
        path: join(project, 'a/b/note.txt'),
        content: 'héllo',
        size: 6,
        offset: 1,
        line_count: 1,
        total_lines: 1,
        truncated: false,
      });
    });
  });

  it('appends, reads other encodings, and accepts absolute paths inside the project', async () => {
    await withProject(async (project) => {
      const file = join(project, 'log.txt');
      await dispatcher.dispatch(
        makeCall(WRITE, { path: file, content: 'a' }, { projectDir: project }),
      );
      await dispatcher.dispatch(
        makeCall(WRITE, { path: 'log.txt', content: 'b', append: 'true' }, { projectDir: project }),
      );
      expect(await readFile(file, 'utf8')).toBe('ab');
      const read = await dispatcher.dispatch(
        makeCall(READ, { file_path: 'log.txt', encoding: 'hex' }, { projectDir: project }),
      );
      expect(read).toMatchObject({ content: '6162', size: 2 });
    });
  });

  it('fails with FILE_NOT_FOUND for a missing file, or a missing directory without create_dirs', async () => {
    await withProject(async (project) => {
      const read = await rejection(
        dispatcher.dispatch(makeCall(READ, { path: 'nope.txt' }, { projectDir: project })),
      );
      expect([read.code, read.retryable]).toEqual([ErrorCode.FILE_NOT_FOUND, false]);
      const write = await rejection(
        dispatcher.dispatch(
          makeCall(
            WRITE,
            { path: 'x/y.txt', content: '', create_dirs: false },
            { projectDir: project },
          ),
        ),
      );
      expect(write.code).toBe(ErrorCode.FILE_NOT_FOUND);
    });
  });

  it.each([
    ['a path climbing out with ..', '../outside/secret.txt'],
    ['an absolute path elsewhere', '/etc/hostname'],
    ['a symlinked directory pointing out', 'link/secret.txt'],
    ['a symlinked file pointing out', 'secret-link.txt'],
  ])('refuses %s with PATH_OUTSIDE_PROJECT', async (_what, path) => {
    await withProject(async (project, outside) => {
      await symlink(outside, join(project, 'link'));
      await symlink(join(outside, 'secret.txt'), join(project, 'secret-link.txt'));
      for (const call of [
        makeCall(READ, { path }, { projectDir: project }),
        makeCall(WRITE, { path, content: 'pwned' }, { projectDir: project }),
      ]) {
        const err = await rejection(dispatcher.dispatch(call));
        expect(err.code).toBe(ErrorCode.PATH_OUTSIDE_PROJECT);
        expect(err.retryable).toBe(false);
        expect(err.message).toContain(path);
        expect(err.message).toContain(project);
      }
      expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret');
    });
  });

  it('refuses to write through a dangling symlink that points out, or under a new dir in one', async () => {
    await withProject(async (project, outside) => {
      await symlink(join(outside, 'new.txt'), join(project, 'dangling'));
      await symlink(join(outside, 'newdir'), join(project, 'dangling-dir'));
      for (const path of ['dangling', 'dangling-dir/x/y.txt']) {
        const err = await rejection(
          dispatcher.dispatch(makeCall(WRITE, { path, content: 'x' }, { projectDir: project })),
        );
        expect(err.code).toBe(ErrorCode.PATH_OUTSIDE_PROJECT);
      }
    });
  });

  it('follows symlinks that stay inside the project', async () => {
    await withProject(async (project) => {
      await mkdir(join(project, 'real'));
      await symlink(join(project, 'real'), join(project, 'alias'));
      await dispatcher.dispatch(
        makeCall(WRITE, { path: 'alias/f.txt', content: 'ok' }, { projectDir: project }),
      );
      expect(await readFile(join(project, 'real/f.txt'), 'utf8')).toBe('ok');
    });
  });

  it("refuses to write into the project's .ai/, .dirigent/ and .git/, also through a symlink, but reads them", async () => {
    await withProject(async (project) => {
      await mkdir(join(project, '.ai', 'tools'), { recursive: true });
      await writeFile(join(project, '.ai', 'tools', 'x.py'), 'print(1)');
      await symlink(join(project, '.git'), join(project, 'hooks-link'));
      for (const path of [
        '.ai/tools/x.py',
        '.dirigent/runs/r.json',
        '.git/hooks/pre-commit',
        'hooks-link/hooks/post-merge',
        './a/../.ai/keys',
      ]) {
        const err = await rejection(
          dispatcher.dispatch(makeCall(WRITE, { path, content: 'x' }, { projectDir: project })),
        );
        expect(err.code, path).toBe(ErrorCode.PATH_PROTECTED);
        expect(err.hint).toContain('Write elsewhere');
      }
      expect(await readFile(join(project, '.ai', 'tools', 'x.py'), 'utf8')).toBe('print(1)');
      // .dirigent/tmp/ is the project's scratch space.
      await expect(
        dispatcher.dispatch(
          makeCall(
            WRITE,
            { path: '.dirigent/tmp/t/scratch', content: 'x' },
            { projectDir: project },
          ),
        ),
      ).resolves.toMatchObject({ bytes: 1 });
      const read = await dispatcher.dispatch(
        makeCall(READ, { path: '.ai/tools/x.py' }, { projectDir: project }),
      );
      expect(read).toMatchObject({ content: 'print(1)' });
    });
  });

  it('refuses a path holding a NUL byte with INVALID_PARAMS, reading or writing', async () => {
    await withProject(async (project) => {
      for (const call of [
        makeCall(READ, { path: 'a\0b' }, { projectDir: project }),
        makeCall(WRITE, { path: 'a\0b', content: '' }, { projectDir: project }),
      ]) {
        const err = await rejection(dispatcher.dispatch(call));
        expect(err.code).toBe(ErrorCode.INVALID_PARAMS);
        expect(err.message).toContain('NUL');
      }
    });
  });
});

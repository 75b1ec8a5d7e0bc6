/**
 * dirigent/fs/read's line ranges and dirigent/fs/edit on real files: exact and lenient
 * replacements, ambiguous and missing texts refused, line ranges by number and by RYE line id,
 * atomic writes that keep permissions, line endings and links, and dry runs that write nothing.
 */
import {
  chmod,
  lstat,
  mkdir,
  readdir,
  readFile,
  realpath,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BuiltinDispatcher } from '../../../src/tools/builtin-dispatcher.js';
import { lineId } from '../../../src/tools/line-id.js';
import { makeCall, rejection, withTempDir } from './helpers.js';

const dispatcher = new BuiltinDispatcher();
type Out = Record<string, unknown>;

/** Runs `fn` with a project holding `files`, and a `call(itemId, params)` into it. */
function withFiles(
  files: Record<string, string>,
  fn: (project: string, call: (itemId: string, params: Out) => Promise<Out>) => Promise<void>,
) {
  return withTempDir(async (dir) => {
    const project = await realpath(dir);
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(project, path, '..'), { recursive: true });
      await writeFile(join(project, path), text);
    }
    await fn(
      project,
      (itemId, params) =>
        dispatcher.dispatch(makeCall(itemId, params, { projectDir: project })) as Promise<Out>,
    );
  });
}
const edit = 'dirigent/fs/edit';
const read = 'dirigent/fs/read';

describe('dirigent/fs/read', () => {
  const text = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

  it('reads a line range, numbered, and says where the rest starts', async () => {
    await withFiles({ 'a.txt': text }, async (_p, call) => {
      expect(
        await call(read, { path: 'a.txt', offset: 10, limit: 2, line_numbers: true }),
      ).toMatchObject({
        content: '    10\tline 10\n    11\tline 11\n',
        offset: 10,
        line_count: 2,
        total_lines: 12,
        truncated: true,
        next_offset: 12,
      });
      expect(await call(read, { path: 'a.txt', offset: 12 })).toMatchObject({
        content: 'line 12\n',
        truncated: false,
      });
    });
  });

  it('caps the content at max_chars on a line boundary, and cuts a single longer line', async () => {
    await withFiles({ 'a.txt': text, 'long.txt': 'x'.repeat(5000) }, async (_p, call) => {
      expect(await call(read, { path: 'a.txt', max_chars: 21 })).toMatchObject({
        content: 'line 1\nline 2\nline 3\n',
        truncated: true,
        next_offset: 4,
      });
      const long = await call(read, { path: 'long.txt', max_chars: 100 });
      expect(long).toMatchObject({ line_count: 1, truncated: false });
      expect((long.content as string).length).toBe(100);
    });
  });

  it('refuses a range past the end, a folder, a binary file as text, and a range on base64', async () => {
    await withFiles({ 'a.txt': text, 'b.bin': 'a\0b', 'd/x': '' }, async (_p, call) => {
      const past = await rejection(call(read, { path: 'a.txt', offset: 13 }));
      expect(past).toMatchObject({ code: 'LINE_OUT_OF_RANGE', retryable: false });
      expect(past.hint).toContain('offset');
      expect((await rejection(call(read, { path: 'd' }))).code).toBe('IS_A_DIRECTORY');
      const binary = await rejection(call(read, { path: 'b.bin' }));
      expect(binary.code).toBe('BINARY_FILE');
      expect(binary.hint).toContain('encoding');
      expect(await call(read, { path: 'b.bin', encoding: 'base64' })).toMatchObject({
        content: 'YQBi',
      });
      expect(
        (await rejection(call(read, { path: 'b.bin', encoding: 'base64', offset: 2 }))).code,
      ).toBe('INVALID_PARAMS');
    });
  });
});

describe('dirigent/fs/edit: a text replaced', () => {
  it('replaces an exact text once, atomically, keeping the mode and leaving no temporary file', async () => {
    await withFiles({ 'run.sh': '#!/bin/sh\necho hi\n' }, async (project, call) => {
      await chmod(join(project, 'run.sh'), 0o754);
      const r = await call(edit, { path: 'run.sh', old: 'echo hi', new: 'echo hello' });
      expect(r).toMatchObject({ path: 'run.sh', match: 'exact', replacements: 1, written: true });
      expect(r.diff).toContain('-echo hi\n+echo hello');
      expect(await readFile(join(project, 'run.sh'), 'utf8')).toBe('#!/bin/sh\necho hello\n');
      expect((await stat(join(project, 'run.sh'))).mode & 0o777).toBe(0o754);
      expect(await readdir(project)).toEqual(['run.sh']);
    });
  });

  it('refuses a text found in several places, listing each, unless replace_all', async () => {
    await withFiles({ 'a.py': 'x = 1\nprint(x)\nx = 1\n' }, async (project, call) => {
      const err = await rejection(call(edit, { path: 'a.py', old: 'x = 1', new: 'x = 2' }));
      expect(err).toMatchObject({ code: 'AMBIGUOUS_MATCH', retryable: false });
      expect(err.details?.candidates).toEqual([
        { line: 1, text: 'x = 1' },
        { line: 3, text: 'x = 1' },
      ]);
      expect(err.hint).toContain('replace_all');
      expect(await readFile(join(project, 'a.py'), 'utf8')).toBe('x = 1\nprint(x)\nx = 1\n');
      expect(
        await call(edit, { path: 'a.py', old: 'x = 1', new: 'x = 2', replace_all: true }),
      ).toMatchObject({ replacements: 2 });
      expect(await readFile(join(project, 'a.py'), 'utf8')).toBe('x = 2\nprint(x)\nx = 2\n');
    });
  });

  it('refuses an ambiguous lenient match too: two blocks equal but for indentation', async () => {
    const text = 'def a():\n    if ok:\n        go()\n\ndef b():\n  if ok:\n    go()\n';
    await withFiles({ 'a.py': text }, async (_p, call) => {
      const err = await rejection(
        call(edit, { path: 'a.py', old: 'if ok:\n go()', new: 'if ok:\n stop()' }),
      );
      expect(err.code).toBe('AMBIGUOUS_MATCH');
      expect(err.details).toMatchObject({
        match: 'indentation',
        candidates: [{ line: 2 }, { line: 6 }],
      });
    });
  });

  it('matches despite trailing spaces, then despite indentation, re-indenting new', async () => {
    await withFiles({ 'a.py': 'def f():\n    a = 1   \n    return a\n' }, async (project, call) => {
      expect(
        await call(edit, {
          path: 'a.py',
          old: '    a = 1\n    return a',
          new: '    a = 2\n    return a',
        }),
      ).toMatchObject({
        match: 'whitespace',
      });
      expect(await readFile(join(project, 'a.py'), 'utf8')).toBe(
        'def f():\n    a = 2\n    return a\n',
      );
      await call(edit, { path: 'a.py', old: 'a = 2\nreturn a', new: 'a = 3\nif a:\n    return a' });
      expect(await readFile(join(project, 'a.py'), 'utf8')).toBe(
        'def f():\n    a = 3\n    if a:\n        return a\n',
      );
    });
  });

  it('keeps CRLF line endings, and says where old is close when it is not in the file', async () => {
    await withFiles({ 'w.txt': 'one\r\ntwo\r\nthree\r\n' }, async (project, call) => {
      expect(await call(edit, { path: 'w.txt', old: 'two\nthree', new: '2\n3' })).toMatchObject({
        match: 'exact',
      });
      expect(await readFile(join(project, 'w.txt'), 'utf8')).toBe('one\r\n2\r\n3\r\n');
      const err = await rejection(call(edit, { path: 'w.txt', old: 'one\nfour', new: 'x' }));
      expect(err).toMatchObject({ code: 'NO_MATCH', details: { first_line_at: [1] } });
    });
  });

  it('dry_run returns the diff and writes nothing; a link is edited through, and stays a link', async () => {
    await withFiles({ 'real.txt': 'a\nb\n' }, async (project, call) => {
      await symlink(join(project, 'real.txt'), join(project, 'link.txt'));
      const dry = await call(edit, { path: 'link.txt', old: 'b', new: 'c', dry_run: true });
      expect(dry).toMatchObject({
        written: false,
        dry_run: true,
        diff: '--- a/link.txt\n+++ b/link.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n',
      });
      expect(await readFile(join(project, 'real.txt'), 'utf8')).toBe('a\nb\n');
      await call(edit, { path: 'link.txt', old: 'b', new: 'c' });
      expect((await lstat(join(project, 'link.txt'))).isSymbolicLink()).toBe(true);
      expect(await readFile(join(project, 'real.txt'), 'utf8')).toBe('a\nc\n');
    });
  });

  it('refuses .ai/, a path out of the project, both kinds of edit at once, and old equal to new', async () => {
    await withFiles({ '.ai/tools/t.py': 'x', 'a.txt': 'x' }, async (_p, call) => {
      expect(
        (await rejection(call(edit, { path: '.ai/tools/t.py', old: 'x', new: 'y' }))).code,
      ).toBe('PATH_PROTECTED');
      expect((await rejection(call(edit, { path: '../a.txt', old: 'x', new: 'y' }))).code).toBe(
        'PATH_OUTSIDE_PROJECT',
      );
      const both = await rejection(
        call(edit, {
          path: 'a.txt',
          old: 'x',
          new: 'y',
          changes: [{ start_line: 1, new_content: '' }],
        }),
      );
      expect(both.code).toBe('INVALID_PARAMS');
      expect((await rejection(call(edit, { path: 'a.txt', old: 'x', new: 'x' }))).code).toBe(
        'INVALID_PARAMS',
      );
    });
  });
});

describe('dirigent/fs/edit: line ranges (RYE edit_lines)', () => {
  const text = 'one\ntwo\nthree\nfour\n';

  it('replaces, deletes and inserts, bottom-up, by number and by line id', async () => {
    await withFiles({ 'a.txt': text }, async (project, call) => {
      const r = await call(edit, {
        path: 'a.txt',
        changes: [
          { line_id: lineId(4, 'four'), new_content: 'FOUR\nFOUR AND A HALF\n' },
          { start_line: 2, end_line: 3, new_content: '' },
          { start_line: 1, end_line: 0, new_content: 'zero' },
        ],
      });
      expect(r).toMatchObject({ changes_applied: 3, lines_changed: 5, written: true });
      expect(await readFile(join(project, 'a.txt'), 'utf8')).toBe(
        'zero\none\nFOUR\nFOUR AND A HALF\n',
      );
    });
  });

  it('refuses a stale line id, lines out of range and overlapping changes, changing nothing', async () => {
    await withFiles({ 'a.txt': text }, async (project, call) => {
      const stale = await rejection(
        call(edit, { path: 'a.txt', changes: [{ line_id: lineId(2, 'TWO'), new_content: 'x' }] }),
      );
      expect(stale.code).toBe('STALE_LINE_ID');
      expect(stale.hint).toContain('start_line');
      const far = await rejection(
        call(edit, { path: 'a.txt', changes: [{ start_line: 9, new_content: 'x' }] }),
      );
      expect(far).toMatchObject({ code: 'LINE_OUT_OF_RANGE', details: { total_lines: 4 } });
      const overlap = await rejection(
        call(edit, {
          path: 'a.txt',
          changes: [
            { start_line: 1, end_line: 2, new_content: 'x' },
            { start_line: 2, end_line: 3, new_content: 'y' },
          ],
        }),
      );
      expect(overlap.code).toBe('INVALID_PARAMS');
      expect(await readFile(join(project, 'a.txt'), 'utf8')).toBe(text);
    });
  });
});

/**
 * RYE's names of the built-ins (`rye/file-system/*`, `rye/web/webfetch`) run the native tools
 * with RYE's parameter names and result fields, where no space holds RYE's own file; a Python
 * file of that id in a space wins, as any higher item does.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ItemResolver } from '../../../src/items/item-resolver.js';
import { SYSTEM_SPACE_ROOT } from '../../../src/items/space.js';
import { ItemDispatcher } from '../../../src/tools/item-dispatcher.js';
import { caller, rejection } from './helpers.js';

let base: string;
let project: string;
let resolver: ItemResolver;
let dispatcher: ItemDispatcher;
const call = caller(
  () => dispatcher,
  () => project,
);
type Out = Record<string, unknown>;

function write(path: string, text: string): void {
  mkdirSync(dirname(join(project, path)), { recursive: true });
  writeFileSync(join(project, path), text);
}

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'dirigent-rye-names-')));
  project = join(base, 'project');
  resolver = new ItemResolver([
    { name: 'project', root: join(project, '.ai') },
    { name: 'user', root: join(base, 'user', '.ai') },
    { name: 'system', root: SYSTEM_SPACE_ROOT },
  ]);
  dispatcher = new ItemDispatcher(resolver);
  write('notes/todo.md', 'buy milk\nTODO: call Ada\nwater plants\n');
});

afterAll(async () => {
  await dispatcher.close();
  resolver.close();
  rmSync(base, { recursive: true, force: true });
});

describe("RYE's names of the built-ins", () => {
  it('are built-ins while no space holds the file, and describe the native schema', () => {
    expect(dispatcher.isBuiltin('rye/file-system/read')).toBe(true);
    expect(dispatcher.describe('rye/file-system/grep')?.description).toContain('dirigent/fs/grep');
    expect(dispatcher.isBuiltin('rye/file-system/nonesuch')).toBe(false);
  });

  it('read gives RYE line ids that edit_lines takes, and refuses them once the file changed', async () => {
    const read = (await call('rye/file-system/read', { file_path: 'notes/todo.md' })) as Out;
    expect(read).toMatchObject({
      success: true,
      line_count: 3,
      total_lines: 3,
      offset: 1,
      truncated: false,
    });
    const lines = (read.output as string).split('\n');
    expect(lines[1]).toMatch(/^\[LID:[0-9a-f]{6}\] TODO: call Ada$/);
    const id = /\[LID:([0-9a-f]{6})\]/.exec(lines[1]!)![1]!;
    const edited = (await call('rye/file-system/edit_lines', {
      path: 'notes/todo.md',
      changes: [{ line_id: id, new_content: 'DONE: call Ada' }],
    })) as Out;
    expect(edited).toMatchObject({ success: true, changes_applied: 1, lines_changed: 1 });
    expect(edited.output).toContain('-TODO: call Ada\n+DONE: call Ada');
    expect(readFileSync(join(project, 'notes/todo.md'), 'utf8')).toBe(
      'buy milk\nDONE: call Ada\nwater plants\n',
    );
    const stale = await rejection(
      call('rye/file-system/edit_lines', {
        path: 'notes/todo.md',
        changes: [{ line_id: id, new_content: 'x' }],
      }),
    );
    expect(stale.code).toBe('STALE_LINE_ID');
  });

  it('glob, grep, ls and write answer with RYE result fields', async () => {
    expect(await call('rye/file-system/glob', { pattern: '*.md' })).toMatchObject({
      success: true,
      files: ['notes/todo.md'],
      count: 1,
      output: 'notes/todo.md',
    });
    expect(await call('rye/file-system/grep', { pattern: 'water', include: '*.md' })).toMatchObject(
      {
        output: 'notes/todo.md:3:water plants',
        matches: [{ file: 'notes/todo.md', line: 3, content: 'water plants' }],
      },
    );
    expect(await call('rye/file-system/ls', { path: 'notes' })).toMatchObject({
      output: 'notes/todo.md',
      entries: [{ name: 'notes/todo.md', type: 'file' }],
    });
    expect(
      await call('rye/file-system/write', { path: 'out/new.txt', content: 'hi' }),
    ).toMatchObject({
      success: true,
      file_path: 'out/new.txt',
      bytes_written: 2,
      created: true,
      output: 'Created new file out/new.txt (2 bytes)',
    });
  });

  it('a Python tool of the same id in the project space shadows the built-in', async () => {
    write(
      '.ai/tools/rye/file-system/glob.py',
      `__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python_function_runtime"
__tool_description__ = "RYE's own glob, shadowing"
CONFIG_SCHEMA = {"type": "object", "properties": {"pattern": {"type": "string"}}}
def execute(params, project_path):
    return {"success": True, "files": ["from python"]}
`,
    );
    resolver.invalidate();
    try {
      expect(dispatcher.isBuiltin('rye/file-system/glob')).toBe(false);
      expect(await call('rye/file-system/glob', { pattern: '*.md' })).toMatchObject({
        files: ['from python'],
      });
      expect(dispatcher.isBuiltin('rye/file-system/grep')).toBe(true);
    } finally {
      rmSync(join(project, '.ai'), { recursive: true, force: true });
      resolver.invalidate();
    }
    expect(dispatcher.isBuiltin('rye/file-system/glob')).toBe(true);
  });
});

import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ItemResolver } from '../../../src/items/item-resolver.js';
import {
  defaultSpaces,
  spacesBelow,
  SYSTEM_SPACE_ROOT,
  type Space,
} from '../../../src/items/space.js';
import { waitFor } from '../../support/wait-for.js';

let base: string;
let spaces: Space[];
let resolver: ItemResolver;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'dirigent-spaces-'));
  spaces = [
    { name: 'project', root: join(base, 'project', '.ai') },
    { name: 'user', root: join(base, 'user', '.ai') },
    { name: 'system', root: join(base, 'system', '.ai') },
  ];
  resolver = new ItemResolver(spaces);
});
afterEach(() => {
  resolver.close();
  rmSync(base, { recursive: true, force: true });
});

function put(space: 'project' | 'user' | 'system', path: string, text = 'x'): string {
  const file = join(base, space, '.ai', path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

describe('ItemResolver', () => {
  it('finds an item in the highest space that has it, and says what it shadows', async () => {
    const system = put('system', 'tools/rye/bash/bash.py');
    const user = put('user', 'tools/rye/bash/bash.py');
    const project = put('project', 'tools/rye/bash/bash.py');
    const r = await resolver.resolve('tool', 'rye/bash/bash');
    expect(r).toMatchObject({ file: project, space: 'project' });
    expect(r.shadowed).toEqual([
      { space: 'user', file: user },
      { space: 'system', file: system },
    ]);
  });

  it('falls through to lower spaces and to each kind folder', async () => {
    const knowledge = put('system', 'knowledge/rye/core/spaces.md');
    const directive = put('user', 'directives/init.md');
    expect((await resolver.resolve('knowledge', 'rye/core/spaces')).file).toBe(knowledge);
    expect(await resolver.resolve('directive', 'init')).toMatchObject({
      file: directive,
      space: 'user',
    });
  });

  it('takes extensions in a fixed order and reports the other files of the same item', async () => {
    const py = put('project', 'tools/x/tool.py');
    const yaml = put('project', 'tools/x/tool.yaml');
    const r = await resolver.resolve('tool', 'x/tool');
    expect(r.file).toBe(py);
    expect(r.alsoFound).toEqual([yaml]);
  });

  it('says where it looked when no space holds the item', async () => {
    await expect(resolver.resolve('tool', 'nope/tool')).rejects.toMatchObject({
      code: 'UNKNOWN_TOOL',
      hint: expect.stringContaining(join(base, 'project', '.ai', 'tools')),
    });
    await expect(resolver.resolve('directive', 'nope')).rejects.toMatchObject({
      code: 'UNKNOWN_DIRECTIVE',
    });
  });

  it.each(['../outside', 'a/../../b', '/etc/passwd', 'a\\b', 'C:/x', '', 'a//b', './a'])(
    'refuses the traversal attempt %j',
    async (id) => {
      await expect(resolver.resolve('tool', id)).rejects.toMatchObject({ code: 'INVALID_ITEM_ID' });
    },
  );

  it('refuses an item that is a symbolic link out of its space', async () => {
    const outside = join(base, 'outside.py');
    writeFileSync(outside, 'x');
    mkdirSync(join(base, 'project', '.ai', 'tools'), { recursive: true });
    symlinkSync(outside, join(base, 'project', '.ai', 'tools', 'sneaky.py'));
    await expect(resolver.resolve('tool', 'sneaky')).rejects.toMatchObject({
      code: 'INVALID_ITEM_ID',
    });
  });

  it('sees a new file that shadows a cached resolution', async () => {
    put('system', 'tools/t.py');
    mkdirSync(join(base, 'project', '.ai', 'tools'), { recursive: true });
    expect((await resolver.resolve('tool', 't')).space).toBe('system');
    put('project', 'tools/t.py');
    await waitFor(async () => (await resolver.resolve('tool', 't')).space === 'project', {
      what: 'the new project file to shadow the cached resolution',
      timeoutMs: 2000,
    });
  });

  it('narrows chains downward: a system item only sees the system space', () => {
    expect(spacesBelow(spaces, 'project').map((s) => s.name)).toEqual([
      'project',
      'user',
      'system',
    ]);
    expect(spacesBelow(spaces, 'user').map((s) => s.name)).toEqual(['user', 'system']);
    expect(spacesBelow(spaces, 'system').map((s) => s.name)).toEqual(['system']);
  });

  it('places the user space at $DIRIGENT_USER_SPACE and the system space in the package', () => {
    const s = defaultSpaces('/p', { DIRIGENT_USER_SPACE: '/u/.ai' });
    expect(s).toEqual([
      { name: 'project', root: '/p/.ai' },
      { name: 'user', root: '/u/.ai' },
      { name: 'system', root: SYSTEM_SPACE_ROOT },
    ]);
    expect(SYSTEM_SPACE_ROOT.endsWith(join('system', '.ai'))).toBe(true);
  });
});

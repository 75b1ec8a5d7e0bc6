/**
 * `dirigent tool create` (seed 002's flow) and `dirigent tool show`, in real processes: the source
 * is validated before anything is written, the tool is registered in the space's enabled.json, and
 * the next command runs it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_MAIN } from '../support/paths.js';

let project: string;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-create-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI_MAIN, ...args, '--project', project], {
    encoding: 'utf8',
    env: { ...process.env, DIRIGENT_USER_SPACE: join(project, 'user-space') },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const NOTES = `import json, os
name = "notes"
description = "Save and list notes."
parameters = {
    "type": "object",
    "properties": {"action": {"type": "string", "enum": ["save", "list"]}, "key": {"type": "string"}},
    "required": ["action"],
}
_FILE = os.path.join(os.path.dirname(__file__), "notes_data.json")
async def execute(params: dict) -> str:
    data = json.loads(open(_FILE).read()) if os.path.exists(_FILE) else {}
    if params["action"] == "save":
        data[params["key"]] = True
        open(_FILE, "w").write(json.dumps(data))
        return f"Saved: {params['key']}"
    return "Saved notes: " + ", ".join(data)
`;

describe('dirigent tool create', () => {
  it('validates, writes and registers a self-registered Python tool that the next command runs', () => {
    writeFileSync(join(project, 'notes.py'), NOTES);
    const created = cli('tool', 'create', 'notes', '--file', join(project, 'notes.py'));
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('rye/core/runtimes/python_function_runtime');
    const file = join(project, '.ai', 'tools', 'notes.py');
    expect(readFileSync(file, 'utf8')).toBe(NOTES);
    const registry = JSON.parse(
      readFileSync(join(project, '.ai', 'tools', 'enabled.json'), 'utf8'),
    );
    expect(registry.tools.notes).toMatchObject({ file: 'notes.py', enabled: true });
    expect(registry.tools.notes.sha256).toMatch(/^[0-9a-f]{64}$/);

    expect(
      cli('tool', 'run', 'notes', '--params', '{"action": "save", "key": "milk"}').stdout,
    ).toContain('Saved: milk');
    expect(JSON.parse(cli('tool', 'run', 'notes', '--params', '{"action": "list"}').stdout)).toBe(
      'Saved notes: milk',
    );
  });

  it('lists exactly what a tool file is missing, and writes nothing', () => {
    const r = cli('tool', 'create', 'half', '--code', 'name = "half"\ndescription = "x"\n');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('INVALID_TOOL');
    expect(r.stderr).toContain('is missing parameters and async def execute(params).');
    expect(existsSync(join(project, '.ai', 'tools', 'half.py'))).toBe(false);
  });

  it('returns the traceback of a module that fails to load', () => {
    const broken = NOTES.replace('name = "notes"', 'name = "broken"').replace(
      'import json, os',
      'import json, os\nimport no_such_module_here',
    );
    const r = cli('tool', 'create', 'broken', '--code', broken);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("ModuleNotFoundError: No module named 'no_such_module_here'");
    expect(existsSync(join(project, '.ai', 'tools', 'broken.py'))).toBe(false);
  });

  it('refuses a name that does not match the file, an existing tool without --force, and a traversal', () => {
    expect(cli('tool', 'create', 'other', '--code', NOTES).stderr).toContain(
      'set name = "other"'.replace('set', 'Set'),
    );
    writeFileSync(join(project, 'notes.py'), NOTES);
    expect(cli('tool', 'create', 'notes', '--file', join(project, 'notes.py')).code).toBe(0);
    const again = cli('tool', 'create', 'notes', '--file', join(project, 'notes.py'));
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('TOOL_EXISTS');
    expect(
      cli('tool', 'create', 'notes', '--file', join(project, 'notes.py'), '--force').code,
    ).toBe(0);
    expect(cli('tool', 'create', '../notes', '--code', NOTES).stderr).toContain('INVALID_ITEM_ID');
  });

  it('creates YAML tools in the user space and refuses chains that do not resolve', () => {
    const ok = cli(
      'tool',
      'create',
      'say/hi',
      '--ext',
      '.yaml',
      '--space',
      'user',
      '--code',
      'tool_type: yaml\nexecutor_id: rye/core/runtimes/bash_runtime\ndescription: hi\nconfig:\n  command: echo hi\n',
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(existsSync(join(project, 'user-space', 'tools', 'say', 'hi.yaml'))).toBe(true);
    expect(JSON.parse(cli('tool', 'run', 'say/hi').stdout)).toMatchObject({ stdout: 'hi\n' });
    const bad = cli(
      'tool',
      'create',
      'say/bye',
      '--ext',
      'yaml',
      '--code',
      'tool_type: yaml\nexecutor_id: no/runtime\ndescription: x\n',
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('EXECUTOR_NOT_FOUND');
    expect(existsSync(join(project, '.ai', 'tools', 'say', 'bye.yaml'))).toBe(false);
  });

  it('turns a tool off with "enabled": false in enabled.json', () => {
    writeFileSync(join(project, 'notes.py'), NOTES);
    cli('tool', 'create', 'notes', '--file', join(project, 'notes.py'));
    const registryFile = join(project, '.ai', 'tools', 'enabled.json');
    const registry = JSON.parse(readFileSync(registryFile, 'utf8'));
    registry.tools.notes.enabled = false;
    writeFileSync(registryFile, JSON.stringify(registry));
    const r = cli('tool', 'run', 'notes', '--params', '{"action": "list"}');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('TOOL_DISABLED');
  });
});

describe('dirigent tool show', () => {
  it('prints the winning file, what it shadows and the chain down to the primitive', () => {
    cli(
      'tool',
      'create',
      'say/hi',
      '--ext',
      '.yaml',
      '--space',
      'user',
      '--code',
      'tool_type: yaml\nexecutor_id: rye/core/runtimes/bash_runtime\ndescription: hi\nconfig:\n  command: echo user\n',
    );
    cli(
      'tool',
      'create',
      'say/hi',
      '--ext',
      '.yaml',
      '--code',
      'tool_type: yaml\nexecutor_id: rye/core/runtimes/bash_runtime\ndescription: hi\nconfig:\n  command: echo project\n',
    );
    const r = cli('tool', 'show', 'say/hi', '--json');
    expect(r.code, r.stderr).toBe(0);
    const shown = JSON.parse(r.stdout);
    expect(shown).toMatchObject({ space: 'project', shadowed: [{ space: 'user' }] });
    expect(
      shown.chain.map((l: { itemId: string; space: string }) => `${l.itemId}@${l.space}`),
    ).toEqual([
      'say/hi@project',
      'rye/core/runtimes/bash_runtime@system',
      'rye/core/primitives/subprocess@system',
    ]);
  });
});

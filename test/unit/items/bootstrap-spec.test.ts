/**
 * Tools of every format declare `bootstrap`, read without running them and checked: a wrong field
 * is a located `INVALID_TOOL` that names it and what it accepts.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseBootstrapSpec } from '../../../src/services/bootstrap-spec.js';
import { readJsToolMetadata } from '../../../src/items/js-tool-metadata.js';
import { readToolItem } from '../../../src/items/read-tool-item.js';
import { parseYamlTool } from '../../../src/items/read-yaml-tool.js';
import { rejection } from '../tools/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'dirigent-bootstrap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, text: string) => {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
};
const read = (name: string, text: string) =>
  readToolItem(
    {
      kind: 'tool',
      itemId: name,
      file: write(name, text),
      space: 'project',
      shadowed: [],
      alsoFound: [],
    },
    dir,
  );

const YAML_HEAD = 'tool_type: yaml\nexecutor_id: rye/core/runtimes/bash_runtime\ndescription: x\n';
const yaml = (bootstrap: string) => parseYamlTool(`${YAML_HEAD}${bootstrap}`, '/p/t.yaml');
const yamlError = (bootstrap: string) => rejection(Promise.resolve().then(() => yaml(bootstrap)));

describe('bootstrap in a YAML tool', () => {
  it('is read with its defaults', () => {
    expect(yaml('bootstrap: { enabled: true, mode: once }\n').bootstrap).toEqual({
      enabled: true,
      mode: 'once',
      priority: 50,
      waitFor: [],
      input: {},
    });
    expect(
      yaml(
        'bootstrap:\n  enabled: true\n  mode: continuous\n  priority: 100\n  wait_for: [db/migrate, db/migrate]\n  input: { force: true }\n',
      ).bootstrap,
    ).toEqual({
      enabled: true,
      mode: 'continuous',
      priority: 100,
      waitFor: ['db/migrate'],
      input: { force: true },
    });
    expect(yaml('bootstrap: { enabled: false }\n').bootstrap).toMatchObject({
      enabled: false,
      mode: 'disabled',
    });
    expect(yaml('').bootstrap).toBeUndefined();
  });

  it('refuses a bad mode, located at its line, suggesting the closest', async () => {
    const err = await yamlError('bootstrap:\n  enabled: true\n  mode: continous\n');
    expect(err.code).toBe('INVALID_TOOL');
    expect(err.message).toContain(
      '`bootstrap.mode` must be once, continuous or disabled, not "continous" (did you mean `continuous`?)',
    );
    expect(err.location).toMatchObject({ file: '/p/t.yaml', line: 6 });
  });

  it('requires a mode when enabled, and enabled itself', async () => {
    expect((await yamlError('bootstrap: { enabled: true }\n')).message).toContain(
      '`bootstrap.mode` is required when enabled is true',
    );
    expect((await yamlError('bootstrap: { mode: once }\n')).message).toContain(
      '`bootstrap.enabled` is required: true or false',
    );
    expect((await yamlError('bootstrap: { enabled: "yes", mode: once }\n')).message).toContain(
      '`bootstrap.enabled` must be true or false, not "yes"',
    );
  });

  it('refuses a priority outside 0–100', async () => {
    for (const p of ['150', '-1', 'high']) {
      const err = await yamlError(`bootstrap:\n  enabled: true\n  mode: once\n  priority: ${p}\n`);
      expect(err.message).toContain('`bootstrap.priority` must be a number from 0 to 100');
      expect(err.location?.line).toBe(7);
    }
    expect(
      yaml('bootstrap: { enabled: true, mode: once, priority: 0 }\n').bootstrap?.priority,
    ).toBe(0);
  });

  it('refuses a wait_for that is not a list of item ids', async () => {
    const one = await yamlError('bootstrap: { enabled: true, mode: once, wait_for: scheduler }\n');
    expect(one.message).toContain('`bootstrap.wait_for` must be a list of tool item ids');
    expect(one.hint).toContain('wait_for: [scheduler]');
    const item = await yamlError(
      'bootstrap: { enabled: true, mode: once, wait_for: [scheduler, 3] }\n',
    );
    expect(item.message).toContain('`bootstrap.wait_for[1]` must be a tool item id');
    const path = await yamlError(
      'bootstrap: { enabled: true, mode: once, wait_for: [../escape] }\n',
    );
    expect(path.message).toContain('`bootstrap.wait_for[0]`');
  });

  it('refuses unknown keys, naming the known ones', async () => {
    const err = await yamlError('bootstrap:\n  enabled: true\n  mode: once\n  waitfor: [x]\n');
    expect(err.message).toContain(
      '`bootstrap.waitfor` is not a known field (did you mean `wait_for`?)',
    );
    expect(err.hint).toBe('bootstrap may hold enabled, mode, priority, wait_for, input.');
    expect(err.location?.line).toBe(7);
  });

  it('refuses a declaration or an input that is not a mapping', async () => {
    expect((await yamlError('bootstrap: true\n')).message).toContain(
      '`bootstrap` must be a mapping of enabled, mode, priority, wait_for, input, not true',
    );
    expect(
      (await yamlError('bootstrap: { enabled: true, mode: once, input: [1] }\n')).message,
    ).toContain('`bootstrap.input` must be a mapping of parameters');
  });
});

describe('bootstrap in a TypeScript tool', () => {
  const TS = "export const description = 'x';\nexport function execute() { return {}; }\n";

  it('is read from `export const bootstrap` as a literal', async () => {
    const item = await read(
      'svc.ts',
      `${TS}const deps = ['db/migrate'];\nexport const bootstrap = { enabled: true, mode: 'continuous', priority: 90, wait_for: deps };\n`,
    );
    expect((item.source as { bootstrap: unknown }).bootstrap).toEqual({
      enabled: true,
      mode: 'continuous',
      priority: 90,
      waitFor: ['db/migrate'],
      input: {},
    });
  });

  it('locates a bad declaration at its export', async () => {
    const file = write(
      'bad.ts',
      `${TS}\nexport const bootstrap = {\n  enabled: true,\n  mode: 'once',\n  priority: 101,\n};\n`,
    );
    const err = await rejection(readJsToolMetadata(file));
    expect(err.code).toBe('INVALID_TOOL');
    expect(err.message).toContain(`JS tool ${file}: \`bootstrap.priority\` must be a number`);
    expect(err.location).toMatchObject({ file, line: 4 });
  });

  it('refuses a bootstrap that is not a literal, without running the file', async () => {
    const file = write(
      'computed.ts',
      `${TS}import { writeFileSync } from 'node:fs';\nwriteFileSync('ran.txt', 'x');\nexport const bootstrap = { enabled: true, mode: pick() };\nfunction pick() { return 'once'; }\n`,
    );
    const err = await rejection(readJsToolMetadata(file));
    expect(err.code).toBe('INVALID_TOOL');
    expect(err.message).toContain('bootstrap');
    expect(existsSync(join(dir, 'ran.txt'))).toBe(false);
  });
});

describe('BOOTSTRAP in a Python tool', () => {
  const PY = 'name = "job"\ndescription = "x"\nparameters = {"type": "object"}\n';
  const EXEC = 'async def execute(params):\n    return "ok"\n';

  it('is read from a module-level literal dict', async () => {
    const item = await read(
      'job.py',
      `${PY}BOOTSTRAP = {"enabled": True, "mode": "once", "priority": 75, "input": {"force": False}}\n${EXEC}`,
    );
    expect((item.source as { bootstrap: unknown }).bootstrap).toEqual({
      enabled: true,
      mode: 'once',
      priority: 75,
      waitFor: [],
      input: { force: false },
    });
  });

  it('locates a bad mode at the assignment, naming BOOTSTRAP', async () => {
    const err = await rejection(
      read('bad.py', `${PY}\nBOOTSTRAP = {"enabled": True, "mode": "always"}\n${EXEC}`),
    );
    expect(err.code).toBe('INVALID_TOOL');
    expect(err.message).toContain('`BOOTSTRAP.mode` must be once, continuous or disabled');
    expect(err.location).toMatchObject({ line: 5 });
  });

  it('refuses a BOOTSTRAP that is not a literal', async () => {
    const err = await rejection(
      read('computed.py', `${PY}BOOTSTRAP = dict(enabled=True, mode="once")\n${EXEC}`),
    );
    expect(err.message).toContain('BOOTSTRAP must be a literal dict');
    expect(err.location).toMatchObject({ line: 4 });
  });

  it('refuses a wait_for that is not a list', async () => {
    const err = await rejection(
      read(
        'wf.py',
        `${PY}BOOTSTRAP = {"enabled": True, "mode": "once", "wait_for": "db"}\n${EXEC}`,
      ),
    );
    expect(err.message).toContain('`BOOTSTRAP.wait_for` must be a list of tool item ids');
  });
});

describe('parseBootstrapSpec', () => {
  it('reads nothing from nothing', () => {
    expect(parseBootstrapSpec(undefined, { subject: 'x' })).toBeUndefined();
    expect(parseBootstrapSpec(null, { subject: 'x' })).toBeUndefined();
  });

  it('keeps mode disabled as declared, even when enabled', () => {
    expect(parseBootstrapSpec({ enabled: true, mode: 'disabled' }, { subject: 'x' })).toMatchObject(
      { enabled: true, mode: 'disabled' },
    );
  });
});

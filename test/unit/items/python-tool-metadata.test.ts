import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPythonToolMetadata } from '../../../src/items/python-tool-metadata.js';
import { resolvePython } from '../../../src/runtimes/python-interpreter.js';

let dir: string;
let python: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dirigent-py-'));
  python = await resolvePython(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tool(name: string, source: string): string {
  const file = join(dir, `${name}.py`);
  writeFileSync(file, source);
  return file;
}

const RYE = `# rye:signed:2026-01-01T00:00:00Z:placeholder:unsigned:unsigned
"""Write a file."""
__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python_function_runtime"
__category__ = "rye/file-system"
__tool_description__ = "Create or overwrite a file"
CONFIG_SCHEMA = {
    "type": "object",
    "properties": {"file_path": {"type": "string"}, "timeout": {"type": "integer", "default": 120}},
    "required": ["file_path"],
}
def execute(params: dict, project_path: str) -> dict:
    return {"success": True}
`;

const SEED = `import json, os
name = "notes"
description = (
    "Save and retrieve short text notes by key. "
    "Actions: save, get, list."
)
parameters = {
    "type": "object",
    "properties": {"action": {"type": "string", "enum": ["save", "get", "list"]}},
    "required": ["action"],
}
open(os.path.join(os.path.dirname(__file__), "ran.txt"), "w").write("the module ran")
async def execute(params: dict) -> str:
    return "ok"
`;

describe('readPythonToolMetadata', () => {
  it('resolves the real interpreter binary once', async () => {
    expect(python).toMatch(/python/);
    expect(await resolvePython(dir)).toBe(python);
  });

  it("reads RYE's module metadata and CONFIG_SCHEMA", async () => {
    const meta = await readPythonToolMetadata(tool('write', RYE), python);
    expect(meta).toMatchObject({
      format: 'rye',
      version: '1.0.0',
      executorId: 'rye/core/runtimes/python_function_runtime',
      category: 'rye/file-system',
      description: 'Create or overwrite a file',
      execute: { async: false, params: ['params', 'project_path'] },
    });
    expect(meta.paramsSchema).toMatchObject({ required: ['file_path'] });
  });

  it('reads the self-registered format without running the module', async () => {
    const meta = await readPythonToolMetadata(tool('notes', SEED), python);
    expect(meta).toMatchObject({
      format: 'seed',
      name: 'notes',
      description: 'Save and retrieve short text notes by key. Actions: save, get, list.',
      execute: { async: true, params: ['params'] },
    });
    expect(existsSync(join(dir, 'ran.txt')), 'the tool module was not executed').toBe(false);
  });

  it('lists exactly what a self-registered tool is missing', async () => {
    const file = tool('half', 'name = "half"\ndescription = "x"\n');
    await expect(readPythonToolMetadata(file, python)).rejects.toMatchObject({
      code: 'INVALID_TOOL',
      message: expect.stringContaining('is missing parameters and async def execute(params)'),
      details: { missing: ['parameters', 'execute'] },
    });
  });

  it('locates a syntax error', async () => {
    const file = tool('broken', 'name = "b"\ndef execute(:\n');
    await expect(readPythonToolMetadata(file, python)).rejects.toMatchObject({
      code: 'INVALID_TOOL',
      location: { file, line: 2 },
    });
  });
});

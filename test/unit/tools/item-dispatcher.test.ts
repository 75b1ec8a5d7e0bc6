/** Tools from the project's spaces, run for real: RYE's Python formats and the self-registered one. */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectiveLoader } from '../../../src/engine/directive-loader.js';
import { Engine } from '../../../src/engine/engine.js';
import { ItemResolver } from '../../../src/items/item-resolver.js';
import { SYSTEM_SPACE_ROOT, type Space } from '../../../src/items/space.js';
import { ItemDispatcher } from '../../../src/tools/item-dispatcher.js';
import { alive } from '../../support/process-alive.js';
import { waitFor } from '../../support/wait-for.js';
import { caller } from './helpers.js';

let base: string;
let project: string;
let resolver: ItemResolver;
let dispatcher: ItemDispatcher;

function put(space: 'project' | 'user', path: string, text: string): void {
  const file = join(base, space, '.ai', 'tools', path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

const RYE_HEAD = (executor: string) => `__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/${executor}"
__tool_description__ = "test tool"
`;

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'dirigent-items-'));
  project = join(base, 'project');
  const spaces: Space[] = [
    { name: 'project', root: join(project, '.ai') },
    { name: 'user', root: join(base, 'user', '.ai') },
    { name: 'system', root: SYSTEM_SPACE_ROOT },
  ];
  resolver = new ItemResolver(spaces);
  dispatcher = new ItemDispatcher(resolver);
  put(
    'project',
    'text/upper.py',
    `${RYE_HEAD('python_function_runtime')}
CONFIG_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}, "times": {"type": "integer", "default": 1}}, "required": ["text"]}
def execute(params, project_path):
    print("noise the tool prints")
    return {"success": True, "upper": params["text"].upper() * params["times"], "project": project_path}
`,
  );
  put(
    'project',
    'text/count.py',
    `${RYE_HEAD('python_script_runtime')}
CONFIG_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
import argparse, json
if __name__ == "__main__":
    p = argparse.ArgumentParser(); p.add_argument("--params"); p.add_argument("--project-path")
    a = p.parse_args()
    print(json.dumps({"success": True, "count": len(json.loads(a.params)["text"])}))
`,
  );
  put(
    'project',
    'notes.py',
    `name = "notes"
description = ("Keeps " "notes.")
parameters = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
async def execute(params: dict) -> str:
    return "note " + params["key"]
`,
  );
  put(
    'project',
    'flaky.py',
    `${RYE_HEAD('python_function_runtime')}
CONFIG_SCHEMA = {"type": "object"}
def execute(params, project_path):
    return {"success": False, "error": "service busy", "retryable": True}
`,
  );
  put(
    'project',
    'raises.py',
    `${RYE_HEAD('python_function_runtime')}
CONFIG_SCHEMA = {"type": "object", "properties": {"kind": {"type": "string"}}}
def execute(params, project_path):
    if params.get("kind") == "timeout": raise TimeoutError("upstream slow")
    raise ValueError("bad input")
`,
  );
  put(
    'project',
    'slow.py',
    `${RYE_HEAD('python_function_runtime')}
CONFIG_SCHEMA = {"type": "object"}
import os, time
def execute(params, project_path):
    open(os.path.join(project_path, "slow.pid"), "w").write(str(os.getpid()))
    time.sleep(30)
`,
  );
  put(
    'user',
    'text/upper.py',
    `${RYE_HEAD('python_function_runtime')}\nCONFIG_SCHEMA = {"type": "object"}\ndef execute(p, d):\n    return {"success": True, "from": "user"}\n`,
  );
  put(
    'user',
    'only_user.py',
    `${RYE_HEAD('python_function_runtime')}\nCONFIG_SCHEMA = {"type": "object"}\ndef execute(p, d):\n    return {"success": True, "from": "user"}\n`,
  );
});
afterAll(async () => {
  await dispatcher.close();
  resolver.close();
  rmSync(base, { recursive: true, force: true });
});

const call = caller(
  () => dispatcher,
  () => project,
);

describe('ItemDispatcher', () => {
  it('runs a RYE function-runtime tool, with params coerced and defaulted by its CONFIG_SCHEMA', async () => {
    await expect(call('text/upper', { text: 'ab', times: '2' })).resolves.toEqual({
      success: true,
      upper: 'ABAB',
      project,
    });
  });

  it('runs a RYE script-runtime tool through its CLI', async () => {
    await expect(call('text/count', { text: 'abcd' })).resolves.toEqual({
      success: true,
      count: 4,
    });
  });

  it('runs a self-registered tool (async execute returning a string)', async () => {
    await expect(call('notes', { key: 'k' })).resolves.toBe('note k');
  });

  it('shadows user tools with project ones and falls through to the user space', async () => {
    await expect(call('only_user')).resolves.toEqual({ success: true, from: 'user' });
    await expect(call('text/upper', { text: 'x' })).resolves.toMatchObject({ upper: 'X' });
  });

  it('turns {"success": false, "retryable": true} and exception types into the error contract', async () => {
    await expect(call('flaky')).rejects.toMatchObject({
      code: 'TOOL_FAILED',
      retryable: true,
      message: expect.stringContaining('service busy'),
    });
    await expect(call('raises', { kind: 'timeout' })).rejects.toMatchObject({
      retryable: true,
      message: expect.stringContaining('TimeoutError: upstream slow'),
    });
    await expect(call('raises')).rejects.toMatchObject({
      retryable: false,
      message: expect.stringContaining('ValueError: bad input'),
    });
  });

  it('validates params before anything runs, reporting every failing path', async () => {
    await expect(call('text/upper', { times: 'x' })).rejects.toMatchObject({
      code: 'INVALID_PARAMS',
      message: expect.stringMatching(/text.*required|required.*text/),
    });
  });

  it('refuses unknown tools and traversal attempts', async () => {
    await expect(call('nope/nothing')).rejects.toMatchObject({ code: 'UNKNOWN_TOOL' });
    await expect(call('../escape')).rejects.toMatchObject({ code: 'INVALID_ITEM_ID' });
  });

  it('stops a running tool when its signal aborts, and its process is gone', async () => {
    const controller = new AbortController();
    const pending = call('slow', {}, controller.signal);
    // Aborted once the tool runs: its process has written its pid.
    const pidFile = join(project, 'slow.pid');
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', {
      what: 'the slow tool to start',
      timeoutMs: 20_000,
    });
    const aborted = Date.now();
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(Date.now() - aborted).toBeLessThan(5000);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(alive(pid), 'the Python process is gone once the call has settled').toBe(false);
  });

  it('runs Python tools from a directive through the engine', async () => {
    writeFileSync(
      join(project, 'shout.md'),
      '# Shout\n\n```xml\n<directive name="shout" version="1.0.0"><process><step name="up"><execute item_type="tool" item_id="text/upper"><param name="text" value="hey"/></execute></step></process><outputs><output name="text" value="${steps.up.result.upper}"/></outputs></directive>\n```\n',
    );
    const engine = new Engine({
      projectDir: project,
      dispatcher,
      loader: new DirectiveLoader(project),
    });
    const record = await engine.run(await engine.loader.loadFile(join(project, 'shout.md')), {});
    expect(record).toMatchObject({ status: 'completed', outputs: { text: 'HEY' } });
  });
});

/**
 * Inputs are data, in every kind of tool: values full of shell syntax (quotes, `$(…)`, backticks,
 * newlines, `;`, `|`, `&&`), NUL bytes and very long values go through `directives/hello.md` and a
 * directive per tool kind (the built-in bash tool, a YAML tool on RYE's bash runtime, a Python
 * tool, a RYE-style `rye/bash/bash` script tool, a Deno tool, an HTTP tool and an MCP tool). Each
 * comes out exactly as it went in, and nothing it holds is ever run: every value tries to create a
 * marker file, which must never exist.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectiveLoader } from '../../src/engine/directive-loader.js';
import { Engine } from '../../src/engine/engine.js';
import { MemoryRunStore } from '../../src/engine/memory-run-store.js';
import type { RunRecord } from '../../src/engine/run-record.js';
import { ErrorCode } from '../../src/errors/index.js';
import { ItemDispatcher } from '../../src/tools/item-dispatcher.js';
import { writeDirective } from '../support/directive-file.js';
import { CLI_MAIN, DIRECTIVES } from '../support/paths.js';

let project: string;
let marker: string;
let engine: Engine;
let dispatcher: ItemDispatcher;
let server: Server;
let base: string;

/** Values that would each create the marker file if any shell read them as code. */
function hostile(): Record<string, string> {
  const touch = `touch ${marker}`;
  return {
    'single quotes': `x'; ${touch}; echo 'y`,
    'double quotes': `a"b"; ${touch}; echo "c`,
    'command substitution': `$(${touch})`,
    backticks: `\`${touch}\``,
    'a newline': `line one\n${touch}`,
    'a pipe': `a | ${touch}`,
    'and-and': `a && ${touch}`,
    'IFS tricks': `\${IFS}$(${touch.replaceAll(' ', '${IFS}')})`,
    'variables and backslashes': `it's \\ $HOME \${PATH} %s %%`,
    'a very long value': `${'long '.repeat(20_000)}$(${touch})`,
  };
}

function put(path: string, text: string): void {
  const file = join(project, '.ai', 'tools', path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** A directive with one input `text` whose one step runs `execute` and keeps `keep` as `out`. */
function directive(name: string, execute: string, keep: string): string {
  return writeDirective(
    project,
    name,
    `<inputs><input name="text" type="string">the value</input></inputs>
     <process><step name="s">${execute}<assign name="out" value="${keep}"/></step></process>
     <outputs><output name="out">what came back</output></outputs>`,
  );
}

const tool = (itemId: string, params: string) =>
  `<execute item_type="tool" item_id="${itemId}">${params}</execute>`;

async function run(file: string, text: string): Promise<RunRecord> {
  return engine.run(await engine.loader.loadFile(file), { text });
}

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-hostile-'));
  marker = join(project, 'PWNED');
  server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ host: req.headers.host, path: u.pathname, q: u.searchParams.get('q') }),
    );
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  put(
    'demo/twice.yaml',
    `version: 1.0.0\ntool_type: yaml\nexecutor_id: rye/core/runtimes/bash_runtime\ndescription: Prints its text twice\nconfig:\n  command: printf '%s|%s' '{text}' "{text}"\nconfig_schema: { type: object, properties: { text: { type: string } }, required: [text] }\n`,
  );
  put(
    'demo/echo.py',
    `__version__ = "1.0.0"\n__tool_type__ = "python"\n__executor_id__ = "rye/core/runtimes/python_function_runtime"\n__tool_description__ = "Echoes its text"\n\nCONFIG_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}\n\n\ndef execute(params, project_path):\n    return {"success": True, "text": params["text"]}\n`,
  );
  // RYE's own bash tool runs its command with shell=True: its command is shell code.
  put(
    'rye/bash/bash.py',
    `__version__ = "1.0.0"\n__tool_type__ = "python"\n__executor_id__ = "rye/core/runtimes/python_function_runtime"\n__tool_description__ = "Runs a shell command"\n\nimport subprocess\n\nCONFIG_SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}\n\n\ndef execute(params, project_path):\n    r = subprocess.run(params["command"], shell=True, cwd=project_path, capture_output=True, text=True)\n    return {"success": r.returncode == 0, "stdout": r.stdout, "stderr": r.stderr, "exit_code": r.returncode}\n`,
  );
  put(
    'demo/echo_ts.ts',
    `export const description = 'Echoes its text';\nexport const version = '1.0.0';\nexport const input_schema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };\nexport async function execute(input: { text: string }) {\n  return { text: input.text };\n}\n`,
  );
  put(
    'demo/fetch.yaml',
    `version: 1.0.0\ntool_type: yaml\nexecutor_id: rye/core/primitives/http_client\ndescription: Fetches an item\nconfig:\n  url: '${base}/items/{id}?q={q}'\nconfig_schema: { type: object, properties: { id: { type: string }, q: { type: string } }, required: [id, q] }\n`,
  );
  put(
    'mcp/servers/fixture.yaml',
    `tool_type: mcp_server\nexecutor_id: null\ncategory: mcp/servers\nconfig:\n  transport: stdio\n  command: '\${RYE_NODE}'\n  args: ['${join(import.meta.dirname, '..', 'fixtures', 'mcp', 'stdio-server.mjs')}']\n  timeout: 20\n`,
  );
  put(
    'mcp/fixture/echo.yaml',
    `tool_type: mcp\nexecutor_id: rye/core/runtimes/mcp_stdio_runtime\ncategory: mcp/fixture\nversion: '1.0.0'\ndescription: echo\nconfig:\n  server: mcp/servers/fixture\n  tool_name: echo\n`,
  );

  const loader = new DirectiveLoader(project, false);
  dispatcher = new ItemDispatcher(loader.items);
  engine = new Engine({ projectDir: project, dispatcher, loader, store: new MemoryRunStore() });
});

afterAll(async () => {
  await dispatcher.close();
  await new Promise((done) => server.close(done));
  rmSync(project, { recursive: true, force: true });
});

describe('directives/hello.md through the CLI', () => {
  it.each(['single quotes', 'command substitution', 'backticks', 'a newline', 'and-and'])(
    'greets a name holding %s, exactly, running none of it',
    (kind) => {
      const name = hostile()[kind]!;
      const r = spawnSync(
        process.execPath,
        [CLI_MAIN, 'run', join(DIRECTIVES, 'hello.md'), '--json', '--input', `name=${name}`],
        { cwd: project, encoding: 'utf8' },
      );
      expect(r.status, r.stderr).toBe(0);
      // hello.md keeps `$trim(result.stdout)`, which also turns each run of blanks into one space.
      const greeting = `Hello, ${name.replace(/\s+/g, ' ')}!`;
      expect(JSON.parse(r.stdout).outputs).toEqual({ greeting });
      expect(existsSync(marker)).toBe(false);
    },
  );
});

describe('every tool kind gets hostile values as data', () => {
  const kinds: [string, () => string, (out: unknown, v: string) => void][] = [
    [
      'the built-in bash tool',
      () =>
        directive(
          'builtin',
          tool(
            'dirigent/shell/bash',
            `<param name="command" value="printf '%s|%s' '{input:text}' &quot;{input:text}&quot;"/>`,
          ),
          '${result.stdout}',
        ),
      (out, v) => expect(out).toBe(`${v}|${v}`),
    ],
    [
      "a YAML tool on RYE's bash runtime",
      () =>
        directive(
          'yaml_bash',
          tool('demo/twice', '<param name="text" value="{input:text}"/>'),
          '${result.stdout}',
        ),
      (out, v) => expect(out).toBe(`${v}|${v}`),
    ],
    [
      'a RYE-style rye/bash/bash script tool',
      () =>
        directive(
          'rye_bash',
          tool('rye/bash/bash', `<param name="command" value="printf '%s' {input:text}"/>`),
          '${result.stdout}',
        ),
      (out, v) => expect(out).toBe(v),
    ],
    [
      'a Python tool',
      () =>
        directive(
          'python',
          tool('demo/echo', '<param name="text" value="[{input:text}]"/>'),
          '${result.text}',
        ),
      (out, v) => expect(out).toBe(`[${v}]`),
    ],
    [
      'a Deno tool',
      () =>
        directive(
          'deno',
          tool('demo/echo_ts', '<param name="text" value="{input:text}"/>'),
          '${result.text}',
        ),
      (out, v) => expect(out).toBe(v),
    ],
    [
      'an MCP tool',
      () =>
        directive(
          'mcp',
          tool('mcp/fixture/echo', '<param name="text" value="&lt;{input:text}&gt;"/>'),
          '${result}',
        ),
      (out, v) => expect(JSON.stringify(out)).toContain(JSON.stringify(`<${v}>`).slice(1, -1)),
    ],
  ];

  it.each(kinds)(
    '%s',
    async (_kind, write, check) => {
      const file = write();
      for (const [what, value] of Object.entries(hostile())) {
        const record = await run(file, value);
        expect(record.status, `${what}: ${JSON.stringify(record.error)}`).toBe('completed');
        check(record.outputs?.out, value);
      }
      expect(existsSync(marker)).toBe(false);
    },
    60_000,
  );

  it('a shell tool refuses a NUL byte with UNSAFE_VALUE and runs nothing', async () => {
    const file = directive(
      'nul',
      tool(
        'dirigent/shell/bash',
        `<param name="command" value="echo '{input:text}'; touch ${marker}"/>`,
      ),
      '${result.stdout}',
    );
    const record = await run(file, 'a\0b');
    expect(record.status).toBe('failed');
    expect(record.error?.code).toBe(ErrorCode.UNSAFE_VALUE);
    expect(record.error?.message).toContain('{input:text} holds a NUL byte');
    expect(existsSync(marker)).toBe(false);
  });

  it('an HTTP tool keeps values in the path and query: the host never changes', async () => {
    const file = writeDirective(
      project,
      'http',
      `<inputs><input name="text" type="string">the value</input></inputs>
       <process><step name="s">${tool('demo/fetch', '<param name="id" value="{input:text}"/><param name="q" value="{input:text}"/>')}<assign name="out" value="\${result.body}"/></step></process>
       <outputs><output name="out">what the server saw</output></outputs>`,
    );
    const values = {
      ...hostile(),
      'a very long value': 'x'.repeat(2000),
      'a host': 'evil.example.com@127.0.0.2:1/x?y#z',
    };
    for (const [what, value] of Object.entries(values)) {
      const record = await run(file, value);
      expect(record.status, `${what}: ${JSON.stringify(record.error)}`).toBe('completed');
      const seen = record.outputs?.out as { host: string; path: string; q: string };
      expect(seen.host).toBe(new URL(base).host);
      expect(decodeURIComponent(seen.path)).toBe(`/items/${value}`);
      expect(seen.q).toBe(value);
    }
    const climb = await run(file, '../admin');
    expect(climb.error?.code).toBe(ErrorCode.UNSAFE_VALUE);
  });
});

describe('values where bash reads text again', () => {
  /** A directive whose first step leaves `ran`, then runs `command` with input `x` in it. */
  function twoSteps(name: string, command: string, extra = ''): string {
    const escaped = command
      .replaceAll('&', '&amp;')
      .replaceAll('"', '&quot;')
      .replaceAll('<', '&lt;')
      .replaceAll('>', '&gt;')
      .replaceAll('\n', '&#10;');
    return writeDirective(
      project,
      name,
      `<inputs><input name="x" type="string">the value</input></inputs>
       <process>
         <step name="first">${tool('dirigent/shell/bash', '<param name="command" value="touch ran"/>')}</step>
         <step name="second">${tool('dirigent/shell/bash', `<param name="command" value="${escaped}"${extra}/>`)}</step>
       </process>`,
    );
  }

  const ROWS: [string, string][] = [
    ['for ((i=0;i<{input:x};i++)); do :; done', 'a[$(touch PWNED)]'],
    ['declare -i n={input:x}', 'a[$(touch PWNED)]'],
    ['n="{input:x}"; if [[ $n -gt 5 ]]; then :; fi', 'a[$(touch PWNED)]'],
    ["command eval 'echo {input:x}'", 'a;touch PWNED'],
    ["trap 'echo {input:x}' EXIT", 'a;touch PWNED'],
    ['bash <<< {input:x}', 'touch PWNED'],
    ['echo {input:x} | sh', 'touch PWNED'],
    ["bash <<'EOF'\n{input:x}\nEOF", 'touch PWNED'],
    ['source <(echo {input:x})', 'touch PWNED'],
    [`python3 -c "print('{input:x}')"`, "');import os;os.system('touch PWNED');print('"],
    ['git log -1 {input:x}', '--output=PWNED'],
  ];

  it.each(ROWS)(
    '%s: a run whose input would be code there is refused before anything runs',
    async (command, value) => {
      const file = twoSteps('reads_again', command);
      const err = await engine.run(await engine.loader.loadFile(file), { x: value }).then(
        () => undefined,
        (e: unknown) => e as { code?: string; message?: string; location?: unknown },
      );
      expect(err?.code).toBe(ErrorCode.UNSAFE_VALUE);
      expect(err?.message).toContain('{input:x} stands in');
      expect(err?.message).toContain('the run was not started');
      expect(err?.location).toMatchObject({ file, line: expect.any(Number) });
      expect(existsSync(join(project, 'ran'))).toBe(false);
      expect(existsSync(join(project, 'PWNED'))).toBe(false);
    },
  );

  it('through the CLI: exit 2 and UNSAFE_VALUE, nothing ran; validate names the construct, strict refuses', () => {
    const file = twoSteps('cli_reads_again', 'for ((i=0;i<{input:x};i++)); do :; done');
    const cli = (args: string[], env: Record<string, string> = {}) =>
      spawnSync(process.execPath, [CLI_MAIN, ...args], {
        cwd: project,
        encoding: 'utf8',
        env: { ...process.env, ...env },
      });
    const refused = cli(['run', file, '--json', '--input', 'x=a[$(touch PWNED)]']);
    expect(refused.status).toBe(2);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      status: 'invalid',
      error: { code: 'UNSAFE_VALUE' },
    });
    expect(existsSync(join(project, 'ran'))).toBe(false);
    const ran = cli(['run', file, '--json', '--input', 'x=3']);
    expect(ran.status, ran.stderr).toBe(0);
    rmSync(join(project, 'ran'), { force: true });

    const validated = cli(['validate', file]);
    expect(validated.status).toBe(0);
    expect(validated.stderr + validated.stdout).toMatch(
      /warning: \{input:x\} stands in arithmetic \(`\(\( \)\)`\).*runs only when its value is an integer.*\[VALUE_AS_CODE\]/,
    );
    expect(cli(['validate', file], { DIRIGENT_STRICT: '1' }).status).toBe(2);
    expect(existsSync(join(project, 'PWNED'))).toBe(false);
  });

  it('a value from a step result is refused where its command would read it as code, failing that step', async () => {
    const file = writeDirective(
      project,
      'from_result',
      `<process>
         <step name="make">${tool('dirigent/shell/bash', `<param name="command" value="printf '%s' 'a;touch PWNED'"/>`)}</step>
         <step name="use">${tool('dirigent/shell/bash', `<param name="command" value="eval &quot;echo \${steps.make.result.stdout}&quot;"/>`)}</step>
       </process>`,
    );
    const record = await engine.run(await engine.loader.loadFile(file), {});
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: ErrorCode.UNSAFE_VALUE, step: 'use' });
    expect(record.error?.message).toContain(
      '${steps.make.result.stdout} stands in text `eval` runs',
    );
    expect(record.error?.message).not.toContain('DIRIGENT_V');
    expect(existsSync(join(project, 'PWNED'))).toBe(false);
  });

  it('lets a value begin with - after --, or where the parameter allows options', async () => {
    const plain = twoSteps('no_options', 'ls {input:x} > /dev/null');
    await expect(
      engine.run(await engine.loader.loadFile(plain), { x: '-la' }),
    ).rejects.toMatchObject({
      code: ErrorCode.UNSAFE_VALUE,
      hint: expect.stringContaining('allow_options="true"'),
    });
    const dashes = twoSteps('dashes', 'ls -- {input:x} > /dev/null 2>&1; true');
    expect((await engine.run(await engine.loader.loadFile(dashes), { x: '-la' })).status).toBe(
      'completed',
    );
    const allowed = twoSteps('allowed', 'ls {input:x} > /dev/null', ' allow_options="true"');
    expect((await engine.run(await engine.loader.loadFile(allowed), { x: '-la' })).status).toBe(
      'completed',
    );
    rmSync(join(project, 'ran'), { force: true });
  });
});

describe('the environment a shell step sees', () => {
  it("holds the filtered environment and what the step passes, never the worker's other variables", async () => {
    process.env.DIRIGENT_TEST_WORKER_SECRET = 'worker-secret-1234';
    try {
      const file = writeDirective(
        project,
        'env_probe',
        `<process><step name="s">${tool('dirigent/shell/bash', '<param name="command" value="echo &quot;[$DIRIGENT_TEST_WORKER_SECRET][$GIVEN][$${PATH:+path}]&quot;"/><param name="env" expr="{&quot;GIVEN&quot;: &quot;given&quot;}"/>')}<assign name="out" value="\${result.stdout}"/></step></process>
         <outputs><output name="out">what bash saw</output></outputs>`,
      );
      const record = await engine.run(await engine.loader.loadFile(file), {});
      expect(record.outputs).toEqual({ out: '[][given][path]\n' });
    } finally {
      delete process.env.DIRIGENT_TEST_WORKER_SECRET;
    }
  });
});

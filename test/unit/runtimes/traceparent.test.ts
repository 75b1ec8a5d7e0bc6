/**
 * Every way a tool runs hands it the call's W3C trace context, so that spans the tool emits join
 * the run's trace: `TRACEPARENT` in the environment of a process (the built-in bash, subprocess
 * runtimes, the warm Python host for the duration of the call), `context.traceparent` in the Deno
 * sandbox, a `traceparent` header from the HTTP primitive and `_meta.traceparent` on an MCP
 * request. Real processes throughout; a call without a trace context sees none, also on a warm
 * host that served one before.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ItemResolver } from '../../../src/items/item-resolver.js';
import { SYSTEM_SPACE_ROOT } from '../../../src/items/space.js';
import { ItemDispatcher } from '../../../src/tools/item-dispatcher.js';
import { makeCall } from '../tools/helpers.js';

const TP1 = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const TP2 = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

let base: string;
let project: string;
let resolver: ItemResolver;
let dispatcher: ItemDispatcher;
let server: Server;
let url: string;

function put(path: string, text: string): void {
  const file = join(project, '.ai', 'tools', path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** Runs `itemId` with `traceparent` (none when undefined). */
function run(
  itemId: string,
  traceparent: string | undefined,
  params: Record<string, unknown> = {},
): Promise<unknown> {
  return dispatcher.dispatch(
    makeCall(itemId, params, {
      projectDir: project,
      ...(traceparent !== undefined && { traceparent }),
    }),
  );
}

const RYE_HEAD = (executor: string) => `__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/${executor}"
__tool_description__ = "reports its trace context"
CONFIG_SCHEMA = {"type": "object"}
import json, os
`;

/** What a shell sees: the variable's value, or `unset` (not the same as empty). */
const PRINT_TRACEPARENT = 'printenv TRACEPARENT || echo unset';

const SDK = resolve('node_modules/@modelcontextprotocol/sdk/dist/esm/server');

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'dirigent-traceparent-'));
  project = join(base, 'project');
  mkdirSync(project);
  resolver = new ItemResolver([
    { name: 'project', root: join(project, '.ai') },
    { name: 'system', root: SYSTEM_SPACE_ROOT },
  ]);
  dispatcher = new ItemDispatcher(resolver, { env: {}, secretsFile: join(base, 'secrets.env') });

  put(
    'trace/bash.yaml',
    `version: 1.0.0\ntool_type: yaml\nexecutor_id: rye/core/runtimes/bash_runtime\ndescription: test\nconfig:\n  command: '${PRINT_TRACEPARENT}'\n`,
  );
  // Reads the variable, then overwrites it: the host must not let that reach the next call.
  put(
    'trace/function.py',
    `${RYE_HEAD('python_function_runtime')}
def execute(params, project_path):
    seen = os.environ.get("TRACEPARENT")
    os.environ["TRACEPARENT"] = "set-by-the-tool"
    return {"success": True, "traceparent": seen, "pid": os.getpid()}
`,
  );
  put(
    'trace/script.py',
    `${RYE_HEAD('python_script_runtime')}
if __name__ == "__main__":
    print(json.dumps({"success": True, "traceparent": os.environ.get("TRACEPARENT")}))
`,
  );
  put(
    'trace/deno.ts',
    `export const description = 'Reports its trace context';
export async function execute(_input: unknown, context: { traceparent?: string }) {
  return { traceparent: context.traceparent ?? null, has: 'traceparent' in context };
}
`,
  );
  const httpTool = (config: string) =>
    `version: 1.0.0\ntool_type: yaml\nexecutor_id: rye/core/primitives/http_client\ndescription: test\nconfig_schema: { type: object, properties: { base: { type: string } } }\nconfig:\n  url: '{base}/echo'\n${config}`;
  put('trace/http.yaml', httpTool(''));
  put('trace/http_own.yaml', httpTool("  headers: { Traceparent: 'chosen-by-the-tool' }\n"));

  // An MCP server (stdio) that reports the request's _meta and its own process.
  const mcpServer = join(base, 'mcp-server.mjs');
  writeFileSync(
    mcpServer,
    `import { McpServer } from ${JSON.stringify(pathToFileURL(join(SDK, 'mcp.js')).href)};
import { StdioServerTransport } from ${JSON.stringify(pathToFileURL(join(SDK, 'stdio.js')).href)};
const server = new McpServer({ name: 'trace', version: '1.0.0' });
server.registerTool('trace', { description: 'trace context' }, async (extra) => ({
  content: [{ type: 'text', text: JSON.stringify({
    meta: extra._meta?.traceparent ?? null,
    env: process.env.TRACEPARENT ?? null,
    pid: process.pid,
  }) }],
}));
await server.connect(new StdioServerTransport());
`,
  );
  put(
    'trace/servers/stdio.yaml',
    `tool_type: mcp_server\nexecutor_id: null\ncategory: trace/servers\nconfig:\n  transport: stdio\n  command: '\${RYE_NODE}'\n  args: ['${mcpServer}']\n  timeout: 20\n`,
  );
  put(
    'trace/mcp.yaml',
    `tool_type: mcp\nexecutor_id: rye/core/runtimes/mcp_stdio_runtime\ncategory: trace\nversion: '1.0.0'\ndescription: trace\nconfig:\n  server: trace/servers/stdio\n  tool_name: trace\n`,
  );

  server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ traceparent: req.headers.traceparent ?? null }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await dispatcher.close();
  resolver.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(base, { recursive: true, force: true });
});

describe('the trace context of a call', () => {
  it('is TRACEPARENT of the built-in bash; a step’s own env may set it otherwise', async () => {
    const bash = (traceparent: string | undefined, env?: Record<string, string>) =>
      run('dirigent/shell/bash', traceparent, {
        command: PRINT_TRACEPARENT,
        ...(env && { env }),
      }) as Promise<{ stdout: string }>;
    expect((await bash(TP1)).stdout).toBe(`${TP1}\n`);
    expect((await bash(undefined)).stdout).toBe('unset\n');
    expect((await bash(TP1, { TRACEPARENT: 'mine' })).stdout).toBe('mine\n');
  });

  it('is TRACEPARENT of a YAML tool on RYE’s bash runtime (subprocess primitive)', async () => {
    await expect(run('trace/bash', TP1)).resolves.toMatchObject({ stdout: `${TP1}\n` });
    await expect(run('trace/bash', undefined)).resolves.toMatchObject({ stdout: 'unset\n' });
  });

  it('is TRACEPARENT of a Python script runtime tool', async () => {
    await expect(run('trace/script', TP1)).resolves.toEqual({ success: true, traceparent: TP1 });
    await expect(run('trace/script', undefined)).resolves.toEqual({
      success: true,
      traceparent: null,
    });
  });

  it('is os.environ["TRACEPARENT"] on the warm Python host for that call only', async () => {
    type Seen = { traceparent: string | null; pid: number };
    const first = (await run('trace/function', TP1)) as Seen;
    const none = (await run('trace/function', undefined)) as Seen;
    const second = (await run('trace/function', TP2)) as Seen;
    const noneAgain = (await run('trace/function', undefined)) as Seen;
    expect([first, none, second, noneAgain].map((s) => s.traceparent)).toEqual([
      TP1,
      null,
      TP2,
      null,
    ]);
    // One warm process served all four: nothing of an earlier call (the tool's own write
    // included) reached a later one.
    expect(new Set([first, none, second, noneAgain].map((s) => s.pid)).size).toBe(1);
  });

  it('is context.traceparent of a Deno tool, per call on its warm host', async () => {
    await expect(run('trace/deno', TP1)).resolves.toEqual({ traceparent: TP1, has: true });
    await expect(run('trace/deno', undefined)).resolves.toEqual({ traceparent: null, has: false });
    await expect(run('trace/deno', TP2)).resolves.toEqual({ traceparent: TP2, has: true });
  });

  it('is the traceparent header of the HTTP primitive, unless the tool sets one', async () => {
    const body = async (itemId: string, traceparent: string | undefined) =>
      ((await run(itemId, traceparent, { base: url })) as { body: unknown }).body;
    expect(await body('trace/http', TP1)).toEqual({ traceparent: TP1 });
    expect(await body('trace/http', undefined)).toEqual({ traceparent: null });
    expect(await body('trace/http_own', TP1)).toEqual({ traceparent: 'chosen-by-the-tool' });
  });

  it('is _meta.traceparent of an MCP request, not the environment of the shared server', async () => {
    type Seen = { meta: string | null; env: string | null; pid: number };
    const first = (await run('trace/mcp', TP1)) as Seen;
    const none = (await run('trace/mcp', undefined)) as Seen;
    const second = (await run('trace/mcp', TP2)) as Seen;
    expect([first, none, second].map((s) => s.meta)).toEqual([TP1, null, TP2]);
    expect([first, none, second].map((s) => s.env)).toEqual([null, null, null]);
    // One server for all three calls: the per-call context does not split the connection pool.
    expect(new Set([first, none, second].map((s) => s.pid)).size).toBe(1);
  });
});

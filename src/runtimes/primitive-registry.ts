/**
 * The code behind primitive items: the last link of every executor chain is one of
 * {@link PrimitiveId}, and maps to a {@link Primitive} here. The registry owns the warm pools
 * (Python hosts, Deno sandboxes, MCP clients), starts them on first use and ends them on `close()`.
 * The Python host, Deno and MCP modules load on first use, so a run that needs none of them never
 * pays for them.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { ItemResolver } from '../items/item-resolver.js';
import type { JsToolMetadata } from '../items/js-tool-metadata.js';
import type { PythonToolMetadata } from '../items/python-tool-metadata.js';
import { spacesBelow } from '../items/space.js';
import type { ChainLink } from '../items/tool-item.js';
import type { DenoSandbox } from './deno/deno-sandbox.js';
import type { McpClientPool } from './mcp/mcp-client-pool.js';
import type { Primitive, PrimitiveCall } from './primitive.js';
import { httpPrimitive } from './primitives/http-primitive.js';
import { subprocessPrimitive } from './primitives/subprocess-primitive.js';
import type { PythonHostPool } from './python-host/python-host-pool.js';
import { PrimitiveId } from './runtime-ids.js';

/** The Python host's module, loaded at the first Python call of the process. */
let pythonHostModule: Promise<typeof import('./python-host/python-host-pool.js')> | undefined;

/** Maps primitive items to code, and owns the warm pools the primitives use. */
export class PrimitiveRegistry {
  private python: PythonHostPool | undefined;
  private deno: DenoSandbox | undefined;
  private mcp: McpClientPool | undefined;
  private readonly table: Record<string, Primitive> = {
    [PrimitiveId.SUBPROCESS]: subprocessPrimitive,
    [PrimitiveId.HTTP_CLIENT]: httpPrimitive,
    [PrimitiveId.PYTHON_HOST]: (call) => this.runPython(call),
    [PrimitiveId.DENO]: (call) => this.runDeno(call),
    [PrimitiveId.MCP]: (call) => this.runMcp(call),
  };

  constructor(private readonly items: ItemResolver) {}

  /** The code of the chain's last link; `UNKNOWN_PRIMITIVE` when it is not one of Dirigent's. */
  get(link: ChainLink): Primitive {
    const primitive = this.table[link.itemId];
    if (primitive !== undefined) return primitive;
    throw DirigentError.fatal(
      ErrorCode.UNKNOWN_PRIMITIVE,
      `"${link.itemId}" (${link.file}) ends an executor chain but is not a primitive Dirigent has.`,
      {
        location: { file: link.file, line: 1, column: 1 },
        hint: `Chains end at one of: ${Object.keys(this.table).join(', ')}. Set executor_id to a runtime that leads there.`,
      },
    );
  }

  /** Ends every warm process the primitives started. */
  async close(): Promise<void> {
    await Promise.all([this.python?.close(), this.deno?.close(), this.mcp?.close()]);
    this.python = this.deno = this.mcp = undefined;
  }

  private async runPython(call: PrimitiveCall): Promise<unknown> {
    const tool = call.chain[0]!.item;
    if (tool.format !== 'python') throw notFor(call, 'Python tools');
    const { PythonHostPool } = await (pythonHostModule ??= import(
      './python-host/python-host-pool.js'
    ));
    // No await between the check and the assignment: concurrent first calls share one pool.
    this.python ??= new PythonHostPool();
    return this.python.call({
      python: call.env.RYE_PYTHON ?? 'python3',
      file: tool.file,
      itemId: call.itemId,
      params: call.params,
      projectDir: call.projectDir,
      env: { ...call.secrets, ...call.vars },
      format: (tool.source as PythonToolMetadata).format,
      ...(call.traceparent !== undefined && { traceparent: call.traceparent }),
      signal: call.signal,
      timeoutMs: call.timeoutMs,
    });
  }

  private async runDeno(call: PrimitiveCall): Promise<unknown> {
    const tool = call.chain[0]!.item;
    if (tool.format !== 'javascript') throw notFor(call, 'JS/TS tools');
    this.deno ??= new (await import('./deno/deno-sandbox.js')).DenoSandbox();
    return this.deno.run({
      file: tool.file,
      itemId: call.itemId,
      meta: tool.source as JsToolMetadata,
      input: call.params,
      projectDir: call.projectDir,
      secrets: call.secrets,
      ...(call.traceparent !== undefined && { traceparent: call.traceparent }),
      signal: call.signal,
      timeoutMs: call.timeoutMs,
    });
  }

  private async runMcp(call: PrimitiveCall): Promise<unknown> {
    const link = call.chain[0]!;
    const { parseMcpTool, readMcpServer } = await import('../items/mcp-definition.js');
    const tool = parseMcpTool(link.item.source, link.file);
    const serverFile =
      typeof call.config.server_config_path === 'string' && call.config.server_config_path !== ''
        ? call.config.server_config_path
        : (
            await this.items.resolve(
              'tool',
              tool.server,
              spacesBelow(this.items.spaces, link.space),
            )
          ).file;
    this.mcp ??= new (await import('./mcp/mcp-client-pool.js')).McpClientPool();
    return this.mcp.call({
      server: await readMcpServer(serverFile),
      toolName: tool.toolName,
      params: call.params,
      env: withoutTraceContext(call.env),
      ...(call.traceparent !== undefined && { traceparent: call.traceparent }),
      projectDir: call.projectDir,
      signal: call.signal,
      timeoutMs: call.timeoutMs,
    });
  }
}

/**
 * `env` without the call's trace context. An MCP connection outlives the call (a stdio server is
 * one process for many calls, and the pool keys it by its environment), so a per-call
 * `TRACEPARENT` would be wrong for every later call and would start a server per call; the trace
 * context goes in each request instead (see `McpToolCall.traceparent`).
 */
function withoutTraceContext(env: Record<string, string>): Record<string, string> {
  if (env.TRACEPARENT === undefined && env.TRACESTATE === undefined) return env;
  const rest = { ...env };
  delete rest.TRACEPARENT;
  delete rest.TRACESTATE;
  return rest;
}

function notFor(call: PrimitiveCall, what: string): DirigentError {
  const last = call.chain[call.chain.length - 1]!;
  return DirigentError.fatal(
    ErrorCode.INVALID_TOOL,
    `Tool "${call.itemId}" reaches primitive ${last.itemId}, which runs ${what} only.`,
    {
      location: { file: call.chain[0]!.file, line: 1, column: 1 },
      hint: "Name a runtime that fits the tool's format in its executor_id.",
    },
  );
}

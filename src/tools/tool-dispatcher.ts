import type { RetryPolicy } from '../directive/ast.js';
import type { ToolCall } from './tool-call.js';

/** What the engine and the compiler may know about a tool without running it. */
export interface ToolDescription {
  itemId: string;
  description: string;
  /** JSON Schema of the parameters. */
  paramsSchema: object;
  /** The tool's own retry policy with defaults applied; a step's `<retry>` overrides it. */
  retry: RetryPolicy;
}

/**
 * The port through which the engine runs tools. The first implementation
 * ({@link BuiltinDispatcher}) runs the built-in tools in process; later work adds item resolution
 * across spaces (project, user, system) and runtime chains (Python, YAML, MCP, workers on a queue)
 * behind this same interface, so the engine never changes for them.
 */
export interface ToolDispatcher {
  /** The tool's description, or `undefined` when no tool has that item id. */
  describe(itemId: string): ToolDescription | undefined;
  /**
   * Validates the parameters and runs the tool. Resolves with the tool's result or rejects with a
   * `DirigentError` whose `retryable` says whether a retry may help (`UNKNOWN_TOOL`,
   * `INVALID_PARAMS` and `CANCELLED` never are). Aborting `call.signal` stops the running work and
   * rejects with the abort reason when that is a `DirigentError` (e.g. `STEP_TIMEOUT`).
   */
  dispatch(call: ToolCall): Promise<unknown>;
  /** Ends what the dispatcher keeps running between calls (warm hosts, sandboxes, clients). */
  close?(): Promise<void>;
}

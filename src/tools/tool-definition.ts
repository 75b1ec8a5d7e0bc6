import type { RetryPolicy } from '../directive/ast.js';
import type { ToolExample } from './tool-example.js';

/** What a running tool knows about the call it serves. */
export interface ToolContext {
  /** Absolute path of the project; file access is confined to it (see {@link resolveInProject}). */
  projectDir: string;
  /** Aborted on step timeout or run cancellation; long-running tools must stop their work. */
  signal: AbortSignal;
  runId: string;
  step: string;
  /** 1-based number of this try. */
  attempt: number;
  /**
   * Variables for the programs the tool runs, beside its filtered environment: the values of its
   * shell templates (`DIRIGENT_V0`, …) and the secrets its templates read.
   */
  vars?: Record<string, string>;
  /**
   * A parameter's text as the directive's author wrote it (`echo {input:name}`), given the text
   * the tool received (`echo "${DIRIGENT_V0}"`): what a tool's messages should quote.
   */
  asWritten?: (text: string) => string;
  /**
   * The W3C `traceparent` of the span running the call, for tools that start processes or make
   * requests: handed on, it makes their own spans part of the run's trace.
   */
  traceparent?: string;
}

/**
 * A tool that runs in process. Its `execute` receives parameters already validated against
 * `paramsSchema` (coerced, defaults filled). It returns the result, or throws a `DirigentError`
 * whose `retryable` flag says whether a retry may help; anything else thrown counts as a fatal
 * `TOOL_FAILED`.
 */
export interface ToolDefinition {
  /** `space/category/name`, e.g. `dirigent/util/echo`. */
  itemId: string;
  description: string;
  /** JSON Schema of the parameters, compiled once by the dispatcher. */
  paramsSchema: object;
  /** Overrides of {@link DEFAULT_RETRY_POLICY}; a step's `<retry>` overrides both. */
  retry?: Partial<RetryPolicy>;
  /** Worked examples: documentation that `dirigent tool test` runs. */
  examples?: readonly ToolExample[];
  execute(params: Record<string, unknown>, ctx: ToolContext): unknown | Promise<unknown>;
}

import type { JsToolMetadata } from '../../items/js-tool-metadata.js';

/** One call of a JS/TS tool in the Deno sandbox. */
export interface DenoToolCall {
  /** Absolute path of the tool module. */
  file: string;
  /** The tool's item id, for messages and `context.itemId`. */
  itemId: string;
  meta: JsToolMetadata;
  /** Already validated against the tool's input schema. */
  input: Record<string, unknown>;
  /** Absolute path of the project: readable and writable by the tool. */
  projectDir: string;
  /** Secrets available to the run; the tool sees only those it declares in `required_secrets`. */
  secrets: Record<string, string>;
  /**
   * The W3C `traceparent` of the span running the call, given to the tool as
   * `context.traceparent` (the sandbox has no environment to put it in). Absent, so is the field.
   */
  traceparent?: string;
  signal: AbortSignal;
  /** Time the call may take, the tool's `limits.timeout_ms` already combined with the step's. */
  timeoutMs: number;
  /**
   * Receives what the tool prints during the call (`console.*`, `context.log`, its stderr), as it
   * comes, with secret values hidden. Without it the output only appears in error details.
   */
  onLog?: (text: string) => void;
}

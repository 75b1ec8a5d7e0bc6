/**
 * The shape of what a JavaScript or TypeScript tool declares, shared by the reader
 * (`readJsToolMetadata`) and the shape checker it calls.
 */
import type { BootstrapSpec } from '../services/bootstrap-spec.js';
import type { JsonValue } from './js-literal-reader.js';

/** One worked example of a tool (`examples`). */
export interface JsToolExample {
  input: Record<string, unknown>;
  output?: unknown;
  description?: string;
}

/** The declarations of a JS/TS tool file. */
export interface JsToolMetadata {
  /** `rye` when the file declares any of RYE's constants, else `dirigent`. */
  format: 'dirigent' | 'rye';
  description: string | undefined;
  version: string | undefined;
  /** RYE's `__executor_id__`. */
  executorId: string | undefined;
  /** RYE's `__tool_type__`. */
  toolType: string | undefined;
  /** RYE's `__category__`. */
  category: string | undefined;
  /** JSON Schema of the input (`input_schema`, or RYE's `CONFIG_SCHEMA`). */
  inputSchema: Record<string, unknown> | undefined;
  outputSchema: Record<string, unknown> | undefined;
  /** `limits.memory_mb` and `limits.timeout_ms`; undefined when not declared. */
  limits: { memoryMb: number | undefined; timeoutMs: number | undefined };
  /** `permissions.network`: no network (default), every host, or these hosts (`host[:port]`). */
  network: boolean | string[];
  /** Names of the secrets the tool reads from `context.secrets`. */
  requiredSecrets: string[];
  examples: JsToolExample[];
  /** `concurrency` and `rate_limit`, as written (the tool reader checks them). */
  concurrency: JsonValue | undefined;
  rateLimit: JsonValue | undefined;
  /** `bootstrap`, checked: whether and how `dirigent worker` starts the tool by itself. */
  bootstrap?: BootstrapSpec;
  /** Whether the module exports `execute`. */
  hasExecute: boolean;
  /** SHA-256 of the file content this was read from (keys warm sandbox hosts). */
  hash?: string;
}

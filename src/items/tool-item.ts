/**
 * A tool item in the one shape the executor chain works with, whatever its file format: Python
 * (RYE's and the self-registered format), YAML (tools, runtimes, primitives, MCP tools), and
 * JS/TS. Formats are read without running the file.
 */
import type { BootstrapSpec } from '../services/bootstrap-spec.js';
import type { ConcurrencySpec, RateLimitSpec } from '../locks/lock-spec.js';
import type { SpaceName } from './space.js';

/** The `env_config` of RYE's runtimes (§4.4), the parts Dirigent applies. */
export interface EnvConfig {
  /** Static variables, applied in order, with `${VAR}` and `${VAR:-default}` expansion. */
  env?: Record<string, string>;
}

/** What the chain and the primitives need to know about one item. */
export interface ToolItem {
  file: string;
  /** The file format the item was read from. */
  format: 'python' | 'yaml' | 'javascript';
  /** RYE's `tool_type` (`python`, `runtime`, `primitive`, `mcp`, `javascript`, …). */
  toolType: string;
  /** The next link of the chain; `null` for a primitive. */
  executorId: string | null;
  description: string;
  version: string | undefined;
  category: string | undefined;
  /** JSON Schema of the parameters; `{type: "object"}` when the tool declares none. */
  paramsSchema: Record<string, unknown>;
  /** JSON Schema the tool's result must satisfy, when declared. */
  outputSchema: Record<string, unknown> | undefined;
  /** Configuration merged down the chain (RYE §4.5): `command`, `args`, `timeout`, `url`, … */
  config: Record<string, unknown>;
  envConfig: EnvConfig | undefined;
  /** Names of the secrets the tool needs; only these are handed to it. */
  requiredSecrets: string[];
  /** Declared limits (JS/TS tools). */
  limits: { memoryMb?: number; timeoutMs?: number };
  /** Network access for sandboxed tools: none, any, or these hosts. */
  network: boolean | string[];
  /** At most `limit` calls at once per rendered `key` (workers on Redis; `concurrency:`). */
  concurrency?: ConcurrencySpec;
  /** At most `max` calls per `durationMs` per rendered `key` (workers on Redis; `rate_limit:`). */
  rateLimit?: RateLimitSpec;
  /**
   * Whether and how `dirigent worker` starts the tool by itself (`bootstrap:`; `BOOTSTRAP = {...}`
   * in Python, `export const bootstrap` in JS/TS; see `services/bootstrap-spec.ts`).
   */
  bootstrap?: BootstrapSpec;
  /** The format's own metadata, for the primitive that runs it. */
  source: unknown;
}

/** One link of an executor chain: the item and where it was found. */
export interface ChainLink {
  itemId: string;
  file: string;
  space: SpaceName;
  item: ToolItem;
}

import type { ChainLink } from '../items/tool-item.js';

/** What a primitive gets: the resolved chain, and the config and environment built from it. */
export interface PrimitiveCall {
  /** The tool's item id (the chain's first link). */
  itemId: string;
  /** Tool first, primitive last. */
  chain: readonly ChainLink[];
  /** Validated parameters (defaults filled). */
  params: Record<string, unknown>;
  /** The chain's merged config, templated (RYE §4.5). */
  config: Record<string, unknown>;
  /** The environment of the call, declared secrets included. */
  env: Record<string, string>;
  /** The declared secrets alone, for primitives that hand them over another way. */
  secrets: Record<string, string>;
  /**
   * Variables the call's shell text refers to (`DIRIGENT_V0`…: values written into a shell
   * command as data), for the programs the tool runs; besides {@link env}.
   */
  vars: Record<string, string>;
  projectDir: string;
  signal: AbortSignal;
  /** The tool's time budget (config `timeout`, a declared limit); the step's own comes via `signal`. */
  timeoutMs: number;
  /**
   * The W3C `traceparent` of the span running the call. Subprocesses get it in {@link env} as
   * `TRACEPARENT`; primitives that serve many calls from one warm process (Python host, Deno) or
   * speak a protocol (HTTP) hand it over per call from here.
   */
  traceparent?: string;
}

/** Code at the end of a chain: runs the call and returns the tool's result, or throws. */
export type Primitive = (call: PrimitiveCall) => Promise<unknown>;

/** Running one worked example of a tool (`dirigent tool test`). */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DirigentError, type SerializedError } from '../errors/index.js';
import { exampleDifference } from './example-difference.js';
import { serveExamplePages, type ExampleServer } from './serve-example-pages.js';
import type { ToolDispatcher } from './tool-dispatcher.js';
import type { ToolExample } from './tool-example.js';

/** How one example went. */
export interface ExampleOutcome {
  itemId: string;
  /** 0-based place of the example in the tool's list. */
  index: number;
  description: string;
  passed: boolean;
  /** Where the result (or the error) departs from the example, when it failed. */
  difference?: string;
  /** What the call returned, or the error it failed with. */
  result?: unknown;
  error?: SerializedError;
  durationMs: number;
}

/**
 * Runs `example` of tool `itemId` through `dispatcher`, in a fresh project folder holding the
 * example's `files` (removed afterwards), with its `serve` pages answered on 127.0.0.1, and
 * compares what comes back with its `output` (or its `error`: code, and `retryable` if given).
 * An example with neither passes when the call succeeds.
 */
export async function runToolExample(
  dispatcher: ToolDispatcher,
  itemId: string,
  example: ToolExample,
  index: number,
  signal: AbortSignal,
): Promise<ExampleOutcome> {
  const started = performance.now();
  const project = await realpath(await mkdtemp(join(tmpdir(), 'dirigent-tool-test-')));
  let server: ExampleServer | undefined;
  try {
    if (example.serve !== undefined) server = await serveExamplePages(example.serve);
    const fill = <T>(value: T): T => (server ? fillServer(value, server.host) : value);
    for (const [path, text] of Object.entries(example.files ?? {})) {
      await mkdir(dirname(join(project, path)), { recursive: true });
      await writeFile(join(project, path), fill(text));
    }
    const base = { itemId, index, description: example.description };
    let outcome: { result: unknown } | { error: DirigentError };
    try {
      const result = await dispatcher.dispatch({
        itemId,
        params: structuredClone(fill(example.input)),
        projectDir: project,
        runId: 'tool-test',
        step: `example-${index + 1}`,
        attempt: 1,
        signal,
      });
      outcome = { result };
    } catch (err) {
      outcome = { error: DirigentError.from(err) };
    }
    const durationMs = performance.now() - started;
    const difference = differenceOf(example, fill(example.output), outcome);
    const seen =
      'result' in outcome ? { result: outcome.result } : { error: outcome.error.toJSON() };
    return {
      ...base,
      passed: difference === undefined,
      ...(difference && { difference }),
      ...seen,
      durationMs,
    };
  } finally {
    await server?.close();
    await rm(project, { recursive: true, force: true });
  }
}

function differenceOf(
  example: ToolExample,
  output: unknown,
  outcome: { result: unknown } | { error: DirigentError },
): string | undefined {
  if (example.error !== undefined) {
    if ('result' in outcome) return `expected error ${example.error.code}, got a result`;
    const e = outcome.error;
    if (e.code !== example.error.code)
      return `expected error ${example.error.code}, got ${e.code}: ${e.message}`;
    if (example.error.retryable !== undefined && e.retryable !== example.error.retryable)
      return `expected error ${e.code} to be ${example.error.retryable ? 'retryable' : 'fatal'}, it is not`;
    return undefined;
  }
  if ('error' in outcome)
    return `expected a result, got error ${outcome.error.code}: ${outcome.error.message}`;
  return output === undefined ? undefined : exampleDifference(output, outcome.result);
}

/** `value` with `{server}` in every string replaced by `host`. */
function fillServer<T>(value: T, host: string): T {
  if (typeof value === 'string') return value.replaceAll('{server}', host) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => fillServer(v, host)) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillServer(v, host)])) as T;
  return value;
}

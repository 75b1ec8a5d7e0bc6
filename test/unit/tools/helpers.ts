import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { DirigentError } from '../../../src/errors/index.js';
import type { ToolCall, ToolDispatcher } from '../../../src/tools/index.js';

/** A call with sensible defaults; each test gets fresh params since validation mutates them. */
export function makeCall(
  itemId: string,
  params: Record<string, unknown>,
  extra: Partial<ToolCall> = {},
): ToolCall {
  return {
    itemId,
    params,
    projectDir: process.cwd(),
    runId: 'run-1',
    step: 'step-1',
    attempt: 1,
    signal: new AbortController().signal,
    ...extra,
  };
}

/** Awaits a rejection and returns it as a DirigentError (failing the test otherwise). */
export async function rejection(promise: Promise<unknown>): Promise<DirigentError> {
  const err: unknown = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DirigentError);
  return err as DirigentError;
}

export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'dirigent-tools-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * `call(itemId, params?, signal?)`: runs a tool through `dispatcher` for a project; `project` is
 * read at each call, so it may be set in a `beforeAll`.
 */
export function caller(dispatcher: () => ToolDispatcher, project: () => string) {
  return (itemId: string, params: Record<string, unknown> = {}, signal?: AbortSignal) =>
    dispatcher().dispatch(
      makeCall(itemId, params, { projectDir: project(), ...(signal && { signal }) }),
    );
}

/**
 * Golden tests of the language: each case is a directive (`cases/NAME.md` or `.yaml`) and its
 * expected run record (`cases/NAME.json`), run by this one table-driven test through the real
 * embedded engine and built-in tools. A case file may also say which inputs to pass, which
 * signals to send while the run waits, and when to cancel it.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectiveLoader } from '../../src/engine/directive-loader.js';
import { DEFAULT_POLICY } from '../../src/policy/project-policy.js';
import { Engine } from '../../src/engine/engine.js';
import type { RunRecord } from '../../src/engine/run-record.js';
import type { DirigentError } from '../../src/errors/dirigent-error.js';
import { BuiltinDispatcher } from '../../src/tools/builtin-dispatcher.js';

interface GoldenCase {
  /** What the case shows, as a sentence. */
  spec: string;
  inputs?: Record<string, unknown>;
  /**
   * Sent in order, each once the run waits. A signal `refused` must be refused with that code (and
   * these problems, when given), leaving the run waiting with its record unchanged.
   */
  signals?: {
    name: string;
    payload: unknown;
    refused?: { code: string; problems?: string[] };
  }[];
  /** Cancel the run after this many milliseconds. */
  cancelAfterMs?: number;
  /** `false`: the cancel skips the compensations of the run's completed steps. */
  compensate?: false;
  /** Expected record: status, outputs, error code and step, and steps as "name:status:attempts". */
  status: RunRecord['status'];
  steps: string[];
  outputs?: Record<string, unknown>;
  /** With `cause` (a `COMPENSATION_FAILED` run): the code and step of the run's first error. */
  error?: { code: string; step: string | null; cause?: { code: string; step: string | null } };
  /** Expected results of step records by name (a compensation's: `compensate:NAME`), as subsets. */
  results?: Record<string, unknown>;
  /** Wait for the run to end even when it waits (for a wait step's timeout). */
  awaitEnd?: boolean;
  /** Upper bound on the run's wall time: proves that timeouts and cancellation stop work. */
  maxMs?: number;
}

const casesDir = join(import.meta.dirname, 'cases');
const project = mkdtempSync(join(tmpdir(), 'dirigent-golden-'));
cpSync(casesDir, project, { recursive: true });
afterAll(() => rmSync(project, { recursive: true, force: true }));

const cases = readdirSync(casesDir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => f.slice(0, -5))
  .sort();

function directiveFile(name: string): string {
  const file = readdirSync(project).find((f) => f.startsWith(`${name}.`) && !f.endsWith('.json'));
  if (!file) throw new Error(`golden case ${name} has no directive file`);
  return join(project, file);
}

describe('golden runs', () => {
  it('has cases', () => expect(cases.length).toBeGreaterThanOrEqual(20));

  it.each(cases)('%s', async (name) => {
    const golden = JSON.parse(readFileSync(join(casesDir, `${name}.json`), 'utf8')) as GoldenCase;
    const engine = new Engine({
      projectDir: project,
      dispatcher: new BuiltinDispatcher(),
      loader: new DirectiveLoader(project, false, {
        ...DEFAULT_POLICY,
        envAllow: new Set(['GOLDEN_GREETING']),
      }),
      env: { GOLDEN_GREETING: 'hi' },
    });
    const loaded = await engine.loader.loadFile(directiveFile(name));
    const started = Date.now();
    const run = engine.start(loaded, golden.inputs ?? {});
    if (golden.cancelAfterMs !== undefined)
      setTimeout(
        () =>
          void engine.cancelRun(run.runId, undefined, {
            ...(golden.compensate === false && { compensate: false }),
          }),
        golden.cancelAfterMs,
      );
    let record = await (golden.awaitEnd ? run.finished() : run.settled());
    for (const s of golden.signals ?? []) {
      expect(record.status, `${golden.spec}: waits before signal ${s.name}`).toBe('waiting');
      if (s.refused === undefined) {
        record = await engine.signal(run.runId, s.name, s.payload);
        continue;
      }
      const before = structuredClone(record);
      const refusal = await engine.signal(run.runId, s.name, s.payload).then(
        () => expect.fail(`${golden.spec}: signal ${s.name} was not refused`),
        (err: unknown) => err as DirigentError,
      );
      expect(refusal.code, `${golden.spec}: ${refusal.message}`).toBe(s.refused.code);
      if (s.refused.problems !== undefined)
        expect(refusal.details?.problems, golden.spec).toEqual(s.refused.problems);
      expect(run.record, `${golden.spec}: the refused signal changed nothing`).toEqual(before);
    }
    const elapsed = Date.now() - started;
    engine.release();
    expect(
      record.steps.map((s) => `${s.name}:${s.status}:${s.attempts}`),
      golden.spec,
    ).toEqual(golden.steps);
    expect(record.status, golden.spec).toBe(golden.status);
    if (golden.outputs !== undefined) expect(record.outputs, golden.spec).toEqual(golden.outputs);
    if (golden.error !== undefined) {
      const { cause } = golden.error;
      const seen = record.error?.cause;
      expect(
        {
          code: record.error?.code,
          step: record.error?.step ?? null,
          ...(cause && { cause: seen && { code: seen.code, step: seen.step } }),
        },
        golden.spec,
      ).toEqual(golden.error);
    } else expect(record.error, golden.spec).toBeNull();
    for (const [step, result] of Object.entries(golden.results ?? {}))
      expect(run.steps[step]?.result, `${golden.spec}: the result of ${step}`).toMatchObject(
        result as object,
      );
    if (golden.maxMs !== undefined)
      expect(elapsed, `${golden.spec}: took ${elapsed} ms`).toBeLessThan(golden.maxMs);
  });
});

/** A run's trace ids are functions of the run; trace context is read as W3C writes it. */
import { describe, expect, it } from 'vitest';
import {
  formatTraceparent,
  parseTraceparent,
  runSpanId,
  stepSpanId,
  stepSpanIdsOf,
  traceIdOfRun,
} from '../../../src/telemetry/run-trace.js';

describe('run trace ids', () => {
  it("takes a UUID run id's 32 hex digits as its trace id, and hashes any other", () => {
    expect(traceIdOfRun('5F0C2A1E-0BAF-4F5A-997C-8E6FFA580E07')).toBe(
      '5f0c2a1e0baf4f5a997c8e6ffa580e07',
    );
    const other = traceIdOfRun('nightly-report');
    expect(other).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIdOfRun('nightly-report')).toBe(other);
  });

  it('derives span ids the same way in every process, distinct per run, step entry and attempt', () => {
    const ids = new Set<string>();
    for (let run = 0; run < 50; run++) {
      const runId = `run-${run}`;
      expect(runSpanId(runId)).toBe(runSpanId(`run-${run}`));
      ids.add(runSpanId(runId));
      for (const step of ['a', 'b'])
        for (let seq = 0; seq < 5; seq++)
          for (let attempt = 1; attempt <= 3; attempt++)
            ids.add(stepSpanId(runId, step, seq, attempt));
    }
    expect(ids.size).toBe(50 + 50 * 2 * 5 * 3);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{16}$/);
  });

  it("derives a run's step span ids the same way when the run's part of the hash is taken once", () => {
    for (const runId of ['5f0c2a1e-0baf-4f5a-997c-8e6ffa580e07', 'nightly-report', '']) {
      const ofRun = stepSpanIdsOf(runId);
      for (const step of ['a', 'compensate:b', 'ünïcode'])
        for (const [seq, attempt] of [
          [0, 1],
          [7, 3],
          [12345, 12],
        ] as const)
          expect(ofRun(step, seq, attempt)).toBe(stepSpanId(runId, step, seq, attempt));
    }
    // Pinned: an id a process of an earlier version derived names the same span.
    expect(stepSpanId('run-1', 'a', 0, 1)).toBe('2020597390b67e6d');
    expect(runSpanId('run-1')).toBe('e483d3721dd22b17');
  });
});

describe('traceparent', () => {
  const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
  const span = '00f067aa0ba902b7';

  it('round-trips through its W3C form', () => {
    const tp = formatTraceparent(trace, span, true);
    expect(tp).toBe(`00-${trace}-${span}-01`);
    expect(parseTraceparent(tp)).toEqual({ traceId: trace, spanId: span, sampled: true });
    expect(parseTraceparent(formatTraceparent(trace, span, false))?.sampled).toBe(false);
  });

  it('reads upper case and surrounding space, as a header may carry them', () => {
    expect(parseTraceparent(`  00-${trace.toUpperCase()}-${span}-01 `)).toEqual({
      traceId: trace,
      spanId: span,
      sampled: true,
    });
  });

  it('refuses what is not one: wrong shape, non-hex, all-zero ids, version ff', () => {
    for (const bad of [
      '',
      'garbage',
      `00-${trace}-${span}`,
      `00-${trace}-${span}-1`,
      `00-${trace.slice(1)}g-${span}-01`,
      `00_${trace}-${span}-01`,
      `00-${'0'.repeat(32)}-${span}-01`,
      `00-${trace}-${'0'.repeat(16)}-01`,
      `ff-${trace}-${span}-01`,
    ])
      expect(parseTraceparent(bad), bad).toBeUndefined();
  });
});

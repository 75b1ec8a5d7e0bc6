/**
 * What a redrive refuses, and what it makes of the stored run: a failed or cancelled run goes on
 * from the snapshot kept before it left its steps, the steps it was in marked running with their
 * next attempt, its error cleared and the redrive noted.
 */
import { describe, expect, it } from 'vitest';
import type { StepRecord } from '../../../src/compiler/run-context.js';
import { DirectiveLoader } from '../../../src/engine/directive-loader.js';
import { redriveRefusal, redrivenRun } from '../../../src/engine/redrive.js';
import type { RunRecord } from '../../../src/engine/run-record.js';
import type { StoredRun } from '../../../src/engine/run-store.js';

const text = `# t

\`\`\`xml
<directive name="t" version="1.0.0"><process>
<step name="a"><render>a</render></step>
<step name="b"><render>b</render></step>
</process></directive>
\`\`\`
`;

function recordOf(status: RunRecord['status'], extra: Partial<RunRecord> = {}): RunRecord {
  return {
    runId: 'r1',
    directive: 't',
    status,
    outputs: null,
    steps: [],
    error: null,
    startedAt: 1,
    endedAt: 2,
    ...extra,
  };
}

describe('redrive', () => {
  it('refuses what did not fail and was not cancelled, what was compensated, and a loop out of steps', () => {
    expect(redriveRefusal(recordOf('completed'), true)).toBe('it completed');
    expect(redriveRefusal(recordOf('waiting'), true)).toMatch(/waits for a signal/);
    expect(redriveRefusal(recordOf('running'), true)).toBe('it is running');
    const compensated = recordOf('failed', {
      steps: [{ name: 'compensate:a', status: 'completed', attempts: 1, durationMs: 1 }],
    });
    expect(redriveRefusal(compensated, true)).toMatch(/compensations ran/);
    const looped = recordOf('failed', {
      error: { code: 'MAX_STEPS_EXCEEDED', message: 'x', step: 'b' },
    });
    expect(redriveRefusal(looped, true)).toMatch(/max_steps/);
    expect(redriveRefusal(recordOf('failed'), false)).toMatch(/before any step/);
    expect(redriveRefusal(recordOf('cancelled'), true)).toBeUndefined();
  });

  it('goes on from the point kept, the failed step running with its next attempt', () => {
    const { compiled } = new DirectiveLoader(process.cwd()).fromText('t.md', text);
    const failedB: StepRecord = {
      status: 'failed',
      result: null,
      error: { code: 'COMMAND_FAILED', message: 'no', retryable: true },
      attempts: 2,
      startedAt: 5,
      endedAt: 6,
      seq: 2,
      retryAt: 9,
    };
    const stored: StoredRun = {
      record: recordOf('failed', { error: { code: 'COMMAND_FAILED', message: 'no', step: 'b' } }),
      snapshot: { value: 'failed', context: {} },
      redrivePoint: { value: { main: 'b' }, context: { inputs: {}, state: {} } },
      source: { file: 't.md', text },
      projectDir: '/p',
      depth: 0,
      parentRunId: null,
      children: {},
      steps: {
        a: {
          status: 'completed',
          result: 'a',
          error: null,
          attempts: 1,
          startedAt: 1,
          endedAt: 2,
          seq: 1,
        },
        b: failedB,
      },
      counters: { transitions: 2, spawns: 0 },
    };
    const next = redrivenRun(stored, compiled.nodes, { by: 'ops', at: 100 });
    expect(next.snapshot).toEqual(stored.redrivePoint);
    expect(next.redrivePoint).toBeUndefined();
    expect(next.record).toMatchObject({ status: 'running', error: null, endedAt: null });
    expect(next.record.redrives).toEqual([
      { at: 100, by: 'ops', steps: ['b'], status: 'failed', error: stored.record.error },
    ]);
    expect(next.steps.a).toEqual(stored.steps.a);
    expect(next.steps.b).toEqual({
      status: 'running',
      result: null,
      error: null,
      attempts: 3,
      redriven: 2,
      startedAt: 100,
      endedAt: null,
      seq: 2,
    });
    // The stored run itself is left as it was.
    expect(stored.steps.b).toBe(failedB);
    expect(failedB.status).toBe('failed');
  });
});

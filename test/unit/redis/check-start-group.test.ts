import { describe, expect, it } from 'vitest';
import { checkStartsJob } from '../../../src/redis/run-worker/check-start-group.js';
import type { StartsJobData } from '../../../src/redis/run-job.js';

const source = { directive: 'hello', text: '# hello', hash: 'abc', ext: '.md' };
const run = { runId: 'run-1', source: 0, inputs: {} };

/** The message `checkStartsJob` refuses `group` with (its code checked), or undefined. */
function refusal(group: unknown): string | undefined {
  try {
    checkStartsJob(group as StartsJobData, 'starts.1');
    return undefined;
  } catch (err) {
    expect(err).toMatchObject({ code: 'INVALID_REQUEST', hint: expect.stringContaining('start') });
    return (err as Error).message;
  }
}

describe('a group of starts, checked before any run of it starts', () => {
  it('passes as the client makes it', () => {
    expect(
      refusal({ kind: 'starts', sources: [source], runs: [run, { ...run, runId: 'run-2' }] }),
    ).toBeUndefined();
  });

  it('is refused whole, naming the job and what is wrong', () => {
    expect(refusal({ kind: 'starts' })).toMatch(
      /^Group of starts starts\.1: it needs `sources` and `runs`/,
    );
    expect(refusal({ kind: 'starts', sources: [source], runs: [] })).toMatch(/non-empty/);
    expect(refusal({ kind: 'starts', sources: [{ directive: 'x' }], runs: [run] })).toMatch(
      /source 0 needs/,
    );
    expect(
      refusal({ kind: 'starts', sources: [source], runs: [{ source: 0, inputs: {} }] }),
    ).toMatch(/run 0 has no `runId`/);
    expect(
      refusal({ kind: 'starts', sources: [source], runs: [{ ...run, runId: '../x' }] }),
    ).toMatch(/run 0: "\.\.\/x" is not a run id/);
    expect(
      refusal({ kind: 'starts', sources: [source], runs: [run, { ...run, source: 1 }] }),
    ).toMatch(/run 1 \(run-1\) names no source/);
    expect(refusal({ kind: 'starts', sources: [source], runs: [{ ...run, inputs: [1] }] })).toMatch(
      /needs `inputs`, an object/,
    );
  });
});

/**
 * How the machine routes a saga, driven with xstate's pure transition functions: a completed step
 * that declares `<compensate>` is noted in the context; a failure or a cancel with such a step to
 * undo goes to `compensating` (told to the engine as `compensate`) instead of ending, and
 * `compensated` ends the run; directives without `<compensate>` compile to the machine they had.
 */
import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { compileDirective } from '../../../src/compiler/compile-directive.js';
import type { RunEvent } from '../../../src/compiler/run-context.js';
import { parseDirective } from '../../../src/directive/parse-directive.js';

const ev = (event: RunEvent) => event as never;

const directive = (process: string) =>
  parseDirective(
    `# t\n\n\`\`\`xml\n<directive name="t" version="1.0.0"><process>${process}</process></directive>\n\`\`\`\n`,
    't.md',
  );

const echo = '<execute item_type="tool" item_id="dirigent/util/echo"/>';
const undoable = (name: string) =>
  `<step name="${name}">${echo}<compensate><execute item_type="tool" item_id="dirigent/util/echo"/></compensate></step>`;
const done = (node: string, result: unknown, more: object = {}) =>
  ev({ type: `done:${node}`, result, assigned: null, edge: 0, ...more });
const failure = { code: 'COMMAND_FAILED', message: 'exit 1', retryable: true };
const types = (actions: unknown[]) => (actions as { type: string }[]).map((a) => a.type);

describe('the machine of a saga', () => {
  it('compiles a directive without <compensate> to the machine it had: no compensating state, nothing noted', () => {
    const { config } = compileDirective(directive(`<step name="a">${echo}</step>`));
    const states = (config as { states: Record<string, unknown> }).states;
    expect(Object.keys(states)).toEqual(['main', 'completed', 'failed', 'cancelled']);
    expect(JSON.stringify(config)).not.toMatch(/recordUndo|undoPending|compensat/);
  });

  it('notes each completed step that declares <compensate> (not a skipped one), with its result', () => {
    const { machine } = compileDirective(
      directive(`${undoable('a')}<step name="b">${echo}</step>${undoable('c')}${undoable('d')}`),
    );
    let [s] = initialTransition(machine, { inputs: {} });
    [s] = transition(machine, s, done('a', { v: 1 }));
    [s] = transition(machine, s, done('b', { v: 2 }));
    [s] = transition(machine, s, done('c', null, { skipped: true }));
    const items = [{ index: 0, item: 'x' }];
    [s] = transition(machine, s, done('d', ['r'], { items }));
    expect(s.context.undo).toEqual([
      { step: 'a', result: { v: 1 } },
      { step: 'd', result: ['r'], items },
    ]);
  });

  it('fails into compensating while a step is to be undone, and ends failed once compensated', () => {
    const { machine } = compileDirective(
      directive(`${undoable('a')}<step name="b">${echo}</step>`),
    );
    let [s] = initialTransition(machine, { inputs: {} });
    [s] = transition(machine, s, done('a', 1));
    const [s1, a1] = transition(machine, s, ev({ type: 'fail:b', error: failure }));
    expect(s1.value).toEqual({ compensating: 'failed' });
    expect(s1.status).toBe('active');
    expect(types(a1)).toContain('compensate');
    expect(s1.context.runError).toMatchObject({ code: 'COMMAND_FAILED', step: 'b' });
    // Compensating, the run hears no cancel and no run failure: its compensations run to their end.
    const [s2] = transition(machine, s1, ev({ type: 'run.cancel' }));
    expect(s2.value).toEqual({ compensating: 'failed' });
    const [s3] = transition(machine, s2, ev({ type: 'compensated' }));
    expect(s3.value).toBe('failed');
    expect(s3.context.runError).toMatchObject({ code: 'COMMAND_FAILED', step: 'b' });
  });

  it('fails straight to failed when nothing completed is to be undone', () => {
    const { machine } = compileDirective(
      directive(`<step name="b">${echo}</step>${undoable('a')}`),
    );
    const [s0] = initialTransition(machine, { inputs: {} });
    const [s1, a1] = transition(machine, s0, ev({ type: 'fail:b', error: failure }));
    expect(s1.value).toBe('failed');
    expect(types(a1)).not.toContain('compensate');
  });

  it('cancels into compensating, or straight to cancelled with compensate: false', () => {
    const { machine } = compileDirective(
      directive(`${undoable('a')}<step name="b">${echo}</step>`),
    );
    let [s] = initialTransition(machine, { inputs: {} });
    [s] = transition(machine, s, done('a', 1));
    const [c1] = transition(machine, s, ev({ type: 'run.cancel' }));
    expect(c1.value).toEqual({ compensating: 'cancelled' });
    expect(transition(machine, c1, ev({ type: 'compensated' }))[0].value).toBe('cancelled');
    const [c2] = transition(machine, s, ev({ type: 'run.cancel', compensate: false }));
    expect(c2.value).toBe('cancelled');
  });

  it('ends failed, with the error the engine made, when a compensation failed for good', () => {
    const { machine } = compileDirective(
      directive(`${undoable('a')}<step name="b">${echo}</step>`),
    );
    let [s] = initialTransition(machine, { inputs: {} });
    [s] = transition(machine, s, done('a', 1));
    [s] = transition(machine, s, ev({ type: 'run.cancel' }));
    const error = { code: 'COMPENSATION_FAILED', message: 'both', step: 'compensate:a' };
    const [end] = transition(machine, s, ev({ type: 'compensated', error }));
    expect(end.value).toBe('failed');
    expect(end.context.runError).toEqual(error);
  });

  it('compensates after a failure in a parallel branch that fails the run', () => {
    const { machine } = compileDirective(
      directive(
        `<parallel name="p"><branch name="x">${undoable('x1')}</branch><branch name="y"><step name="y1">${echo}</step></branch></parallel>`,
      ),
    );
    let [s] = initialTransition(machine, { inputs: {} });
    [s] = transition(machine, s, done('x1', 1));
    [s] = transition(machine, s, ev({ type: 'fail:y1', error: failure }));
    expect(s.value).toEqual({ compensating: 'failed' });
  });
});

import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { compileDirective } from '../../../src/compiler/compile-directive.js';
import { toMermaid } from '../../../src/compiler/to-mermaid.js';
import type { RunEvent } from '../../../src/compiler/run-context.js';
import { parseDirective } from '../../../src/directive/parse-directive.js';

/** Events in the machine's protocol (the compiled config is data, so its event type is loose). */
const ev = (event: RunEvent) => event as never;

const directive = (process: string, extra = '') =>
  parseDirective(
    `# t\n\n\`\`\`xml\n<directive name="t" version="1.0.0">${extra}<process>${process}</process></directive>\n\`\`\`\n`,
    't.md',
  );

const echo = '<execute item_type="tool" item_id="dirigent/util/echo"/>';
type Action = { type: string; params?: { node?: string } };
const effects = (actions: unknown[]) =>
  (actions as Action[])
    .filter((a) =>
      ['startStep', 'stopStep', 'stepEnded', 'nodeEntered', 'branchEnded'].includes(a.type),
    )
    .map((a) => `${a.type}:${a.params?.node}`);

describe('compileDirective (pure, driven with xstate transition functions)', () => {
  it('starts the first step and names its effects instead of performing them', () => {
    const { machine } = compileDirective(
      directive(`<step name="a">${echo}</step><step name="b">${echo}</step>`),
    );
    const [snap, actions] = initialTransition(machine, { inputs: {} });
    expect(snap.value).toEqual({ main: 'a' });
    expect(effects(actions)).toEqual(['startStep:a']);
    expect(snap.context).toEqual({
      inputs: {},
      state: {},
      error: null,
      runError: null,
      returned: null,
    });
  });

  it('follows the route index that the engine chose when a step is done', () => {
    const { machine, nodes } = compileDirective(
      directive(
        `<step name="a">${echo}<assign name="x" expr="1"/><next><when path="state.x" op="eq" value="1" to="c"/><otherwise to="b"/></next></step><step name="b">${echo}</step><step name="c">${echo}</step>`,
      ),
    );
    expect(nodes.get('a')!.routes.map((r) => r.to)).toEqual(['c', 'b']);
    const [s0] = initialTransition(machine, { inputs: {} });
    const [s1, actions] = transition(
      machine,
      s0,
      ev({ type: 'done:a', result: 1, assigned: { x: 1 }, edge: 0 }),
    );
    expect(s1.value).toEqual({ main: 'c' });
    expect(s1.context.state).toEqual({ x: 1 });
    expect(effects(actions)).toEqual(['stopStep:a', 'stepEnded:a', 'startStep:c']);
  });

  it('has no timers: a failure event is final, and fails the run without on_error', () => {
    const { machine } = compileDirective(
      directive(`<step name="a">${echo}<retry attempts="3"/><timeout seconds="5"/></step>`),
    );
    const [s0, a0] = initialTransition(machine, { inputs: {} });
    expect((a0 as Action[]).some((a) => a.type === 'xstate.raise')).toBe(false);
    const error = { code: 'COMMAND_FAILED', message: 'exit 1', retryable: true };
    const [s1, a1] = transition(machine, s0, ev({ type: 'fail:a', error }));
    expect(s1.value).toBe('failed');
    expect(s1.context.runError).toEqual({ code: 'COMMAND_FAILED', message: 'exit 1', step: 'a' });
    expect(effects(a1)).toEqual(['stopStep:a', 'stepEnded:a']);
  });

  it('sends a failure to on_error with the error in context', () => {
    const { machine } = compileDirective(
      directive(
        `<step name="a" on_error="r">${echo}<retry attempts="5"/></step><step name="b">${echo}</step><step name="r">${echo}</step>`,
      ),
    );
    const [s0] = initialTransition(machine, { inputs: {} });
    const [s1] = transition(
      machine,
      s0,
      ev({ type: 'fail:a', error: { code: 'INVALID_PARAMS', message: 'bad', retryable: false } }),
    );
    expect(s1.value).toEqual({ main: 'r' });
    expect(s1.context.error).toMatchObject({ code: 'INVALID_PARAMS' });
  });

  it('runs parallel branches as regions and settles the block once every branch ends', () => {
    const { machine } = compileDirective(
      directive(
        `<parallel name="p"><branch name="x"><step name="x1">${echo}</step></branch><branch name="y"><step name="y1">${echo}</step></branch></parallel>`,
      ),
    );
    const [s0, a0] = initialTransition(machine, { inputs: {} });
    expect(effects(a0)).toEqual(['nodeEntered:p', 'startStep:x1', 'startStep:y1']);
    const [s1, a1] = transition(
      machine,
      s0,
      ev({ type: 'done:x1', result: 1, assigned: null, edge: 0 }),
    );
    const [s2, a2] = transition(
      machine,
      s1,
      ev({ type: 'done:y1', result: 2, assigned: null, edge: 0 }),
    );
    expect(s2.value).toEqual({ main: { p: 'settle' } });
    expect(effects(a2)).toContain('startStep:p');
    expect(effects(a1)).toEqual(['stopStep:x1', 'stepEnded:x1', 'branchEnded:x']);
  });

  it('cancels every running step when the run is cancelled', () => {
    const { machine } = compileDirective(
      directive(
        `<parallel name="p"><branch name="x"><step name="x1">${echo}</step></branch><branch name="y"><step name="y1">${echo}</step></branch></parallel>`,
      ),
    );
    const [s0] = initialTransition(machine, { inputs: {} });
    const [s1, a1] = transition(machine, s0, { type: 'run.cancel' });
    expect(s1.value).toBe('cancelled');
    expect(effects(a1).sort()).toEqual(['stopStep:x1', 'stopStep:y1']);
  });

  it('completes at once when there are no steps', () => {
    const { machine } = compileDirective(directive(''));
    const [snap] = initialTransition(machine, { inputs: {} });
    expect(snap.status).toBe('done');
    expect(snap.value).toBe('completed');
  });

  it('draws the machine as a Mermaid flowchart with conditions and on_error edges', () => {
    const compiled = compileDirective(
      directive(
        `<step name="a" on_error="r">${echo}<next><when path="inputs.n" op="gt" value="2" to="$end"/></next></step><step name="r">${echo}</step>`,
        '<inputs><input name="n" type="integer"/></inputs>',
      ),
    );
    const text = toMermaid(compiled);
    expect(text).toContain('flowchart TD');
    expect(text).toContain('n_a -->|inputs.n gt 2| end_');
    expect(text).toContain('n_a --> n_r');
    expect(text).toContain('n_a -. on_error .-> n_r');
  });
});

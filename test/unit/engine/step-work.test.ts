/**
 * A step's work on its own, on a plain run: what it sends the machine when the work ends, and
 * what stopping it does.
 */
import { describe, expect, it } from 'vitest';
import type { CompiledNode } from '../../../src/compiler/compiled-directive.js';
import type { RunContext, RunEvent, StepRecord } from '../../../src/compiler/run-context.js';
import type { StepNode } from '../../../src/directive/ast.js';
import { DirigentError } from '../../../src/errors/dirigent-error.js';
import { DirectiveLoader } from '../../../src/engine/directive-loader.js';
import { StepWork, type WorkingRun } from '../../../src/engine/step-work.js';

const context: RunContext = { inputs: {}, state: {}, error: null, runError: null, returned: null };

const text = `# two

\`\`\`xml
<directive name="two" version="1.0.0">
  <process>
    <step name="hello"><execute item_type="tool" item_id="fake/hello"/></step>
    <step name="slow"><execute item_type="tool" item_id="fake/slow"/></step>
  </process>
</directive>
\`\`\`
`;
const nodes = new DirectiveLoader(process.cwd()).fromText('two.md', text).compiled.nodes;

/** A step of the directive above, compiled, with its step node. */
function stepNode(name: string): { cn: CompiledNode; step: StepNode } {
  const cn = nodes.get(name)!;
  if (cn.node.kind !== 'step') throw new Error(`${name} is not a step`);
  return { cn, step: cn.node };
}

/** A run that keeps the events its work sends and the stopped work it is asked to track. */
function plainRun() {
  const sent: RunEvent[] = [];
  const tracked: Promise<unknown>[] = [];
  const steps: Record<string, StepRecord> = {};
  const run: WorkingRun = {
    runId: 'run-1',
    host: { durable: false, observer: undefined, trackWork: (w) => void tracked.push(w) },
    steps,
    data: { steps, env: {} },
    spans: undefined,
    onParkable: undefined,
    lifecycle: { checkpoint: () => undefined },
    actor: { getSnapshot: () => ({ context }) } as unknown as WorkingRun['actor'],
    send: (event) => void sent.push(event),
  };
  return { run, sent, tracked };
}

describe('StepWork', () => {
  it('settles a step with what its work returns, choosing its route', async () => {
    const { run, sent } = plainRun();
    const work = new StepWork(run);
    const { cn, step } = stepNode('hello');
    work.workStep(cn, step, () => Promise.resolve('hi'), undefined, undefined);
    expect(work.inflight.has('hello')).toBe(true);
    await work.inflight.get('hello')!.done;
    expect(sent).toMatchObject([{ type: 'done:hello', edge: 0, result: 'hi' }]);
    expect(work.inflight.size).toBe(0);
  });

  it('fails a step whose work throws, at the step when the error has no place of its own', async () => {
    const { run, sent } = plainRun();
    const work = new StepWork(run);
    const { cn, step } = stepNode('hello');
    const boom = () => Promise.reject(DirigentError.fatal('TOOL_FAILED', 'boom'));
    work.workStep(cn, step, boom, undefined, undefined);
    await work.inflight.get('hello')!.done;
    expect(sent).toMatchObject([
      { type: 'fail:hello', error: { code: 'TOOL_FAILED', location: { line: 6 } } },
    ]);
  });

  it('stops work under way: its signal aborts, the host tracks it, and its outcome is dropped', async () => {
    const { run, sent, tracked } = plainRun();
    const work = new StepWork(run);
    const { cn, step } = stepNode('slow');
    let signal: AbortSignal | undefined;
    const slow = (_attempt: number, s: AbortSignal) => {
      signal = s;
      return new Promise((resolve) => s.addEventListener('abort', () => resolve('late')));
    };
    work.workStep(cn, step, slow, undefined, undefined);
    expect(work.stop('slow')).toBe(true);
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as DirigentError).code).toBe('CANCELLED');
    expect(tracked).toHaveLength(1);
    await tracked[0];
    expect(sent).toEqual([]);
    expect(work.stop('slow')).toBe(false);
  });
});

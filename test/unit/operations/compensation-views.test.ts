/**
 * How a run page shows compensations: the graph has a node beside each step that declares
 * `<compensate>` (joined by an `undo` edge, a foreach's drawn as a stack), and the timeline has a
 * row per compensation that names the step it undoes, under way or ended.
 */
import { describe, expect, it } from 'vitest';
import type { StepRecord } from '../../../src/compiler/run-context.js';
import { compileDirective } from '../../../src/compiler/compile-directive.js';
import { parseDirective } from '../../../src/directive/parse-directive.js';
import type { RunRecord } from '../../../src/engine/run-record.js';
import { directiveGraph } from '../../../src/operations/directive-graph.js';
import { runTimeline } from '../../../src/operations/run-timeline.js';

const echo = '<execute item_type="tool" item_id="dirigent/util/echo"/>';
const undo = '<compensate><execute item_type="tool" item_id="orders/cancel"/></compensate>';

describe('the views of compensations', () => {
  it("draws each step's compensation beside it, with an undo edge, in the step's branch", () => {
    const g = directiveGraph(
      compileDirective(
        parseDirective(
          `# t\n\n\`\`\`xml\n<directive name="t" version="1.0.0"><process>
<step name="a">${echo}${undo}</step>
<parallel name="p"><branch name="x"><step name="each"><foreach expr="[1]" as="n">${echo}</foreach>
${undo}</step></branch></parallel>
</process></directive>\n\`\`\`\n`,
          't.md',
        ),
      ),
    );
    expect(g.nodes.find((n) => n.id === 'c:a')).toEqual({
      id: 'c:a',
      kind: 'compensate',
      step: 'compensate:a',
      label: 'compensate:a',
      detail: 'tool orders/cancel',
      action: 'execute',
      line: 5,
    });
    expect(g.nodes.find((n) => n.id === 'c:each')).toMatchObject({
      kind: 'compensate',
      detail: 'each n → tool orders/cancel',
      action: 'foreach',
      cluster: 'b:x',
      line: 7,
    });
    expect(g.edges).toContainEqual({ from: 's:a', to: 'c:a', kind: 'compensate', label: 'undo' });
    expect(g.edges).toContainEqual({
      from: 's:each',
      to: 'c:each',
      kind: 'compensate',
      label: 'undo',
    });
    // A compensation is no step of the process: no edge leaves it.
    expect(g.edges.filter((e) => e.from.startsWith('c:'))).toEqual([]);
  });

  it('has a row per compensation that names the step it undoes, ended or under way', () => {
    const rec = (over: Partial<StepRecord>): StepRecord => ({
      status: 'completed',
      result: null,
      error: null,
      attempts: 1,
      startedAt: null,
      endedAt: null,
      ...over,
    });
    const record: RunRecord = {
      runId: 'r',
      directive: 'd',
      status: 'running',
      outputs: null,
      steps: [
        { name: 'a', status: 'completed', attempts: 1, durationMs: 10 },
        { name: 'b', status: 'failed', attempts: 1, durationMs: 10 },
        { name: 'compensate:b', status: 'completed', attempts: 1, durationMs: 10 },
      ],
      error: null,
      startedAt: 1000,
      endedAt: null,
    };
    const rows = runTimeline(record, {
      a: rec({ startedAt: 1000, endedAt: 1010 }),
      b: rec({ status: 'failed', startedAt: 1010, endedAt: 1020 }),
      'compensate:b': rec({ startedAt: 1020, endedAt: 1030 }),
      'compensate:a': rec({ status: 'running', startedAt: 1030, attempts: 2, retryAt: 1500 }),
    });
    expect(rows.map((r) => [r.step, r.status, r.compensates])).toEqual([
      ['a', 'completed', undefined],
      ['b', 'failed', undefined],
      ['compensate:b', 'completed', 'b'],
      ['compensate:a', 'running', 'a'],
    ]);
    expect(rows[3]).toMatchObject({ endedAt: null, retryAt: 1500, attempts: 2 });
  });
});

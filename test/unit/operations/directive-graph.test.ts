import { describe, expect, it } from 'vitest';
import { compileDirective } from '../../../src/compiler/compile-directive.js';
import { parseDirective } from '../../../src/directive/parse-directive.js';
import { directiveGraph } from '../../../src/operations/directive-graph.js';

const graphOf = (process: string, inputs = '') =>
  directiveGraph(
    compileDirective(
      parseDirective(
        `# t\n\n\`\`\`xml\n<directive name="t" version="1.0.0">${inputs}<process>${process}</process></directive>\n\`\`\`\n`,
        't.md',
      ),
    ),
  );
const echo = '<execute item_type="tool" item_id="dirigent/util/echo"/>';
const edges = (g: ReturnType<typeof graphOf>) =>
  g.edges.map((e) => `${e.from} -${e.kind}${e.label ? `(${e.label})` : ''}-> ${e.to}`);

describe('directiveGraph', () => {
  it('draws a sequence from start to end, each step with what it does and its line', () => {
    const g = graphOf(`<step name="a">${echo}</step>\n<step name="b"><render>x</render></step>`);
    expect(edges(g)).toEqual(['start -next-> s:a', 's:a -next-> s:b', 's:b -next-> end']);
    expect(g.nodes.find((n) => n.id === 's:a')).toMatchObject({
      kind: 'step',
      step: 'a',
      detail: 'tool dirigent/util/echo',
      action: 'execute',
      line: 4,
    });
    expect(g.nodes.find((n) => n.id === 's:b')).toMatchObject({ detail: 'render', line: 5 });
  });

  it('draws conditions, the default route, a loop and on_error', () => {
    const g = graphOf(
      `<step name="a" on_error="rescue">${echo}<next><when path="state.i" op="lt" value="3" to="a"/><otherwise to="b"/></next></step>` +
        `<step name="b">${echo}</step><step name="rescue">${echo}</step>`,
    );
    expect(edges(g)).toEqual([
      'start -next-> s:a',
      's:a -when(state.i lt 3)-> s:a',
      's:a -otherwise-> s:b',
      's:a -error(on_error)-> s:rescue',
      's:b -next-> s:rescue',
      's:rescue -next-> end',
    ]);
  });

  it('draws a parallel block as a fork and a join around its branches, and a foreach as one step', () => {
    const g = graphOf(
      `<parallel name="p"><branch name="l"><step name="x">${echo}</step></branch>` +
        `<branch name="r"><step name="y"><foreach over="\${inputs.list}" as="item" parallel="4">${echo}</foreach></step></branch></parallel>` +
        `<step name="after">${echo}</step>`,
      '<inputs><input name="list" type="array"/></inputs>',
    );
    expect(g.clusters).toEqual([
      { id: 'p:p', kind: 'parallel', label: 'p (parallel, fail_fast)', step: 'p' },
      { id: 'b:l', kind: 'branch', label: 'l', step: 'l', cluster: 'p:p' },
      { id: 'b:r', kind: 'branch', label: 'r', step: 'r', cluster: 'p:p' },
    ]);
    expect(g.nodes.find((n) => n.id === 's:y')).toMatchObject({
      cluster: 'b:r',
      action: 'foreach',
      detail: 'foreach item ×4 → tool dirigent/util/echo',
    });
    expect(edges(g)).toEqual([
      'start -next-> fork:p',
      'fork:p -next-> s:x',
      'fork:p -next-> s:y',
      'join:p -next-> s:after',
      's:x -next-> join:p',
      's:y -next-> join:p',
      's:after -next-> end',
    ]);
  });
});

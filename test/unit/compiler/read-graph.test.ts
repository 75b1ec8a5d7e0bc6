/** RYE state graphs (YAML, `tool_type: graph`): what is read, and how bad graphs are reported. */
import { describe, expect, it } from 'vitest';
import { readGraph } from '../../../src/compiler/read-graph.js';
import { DirigentError } from '../../../src/errors/index.js';

const FILE = 'graphs/review.yaml';

function graph(nodes: string, extra = ''): string {
  return `# rye:signed:2026-01-01T00:00:00Z:placeholder:unsigned:unsigned
version: "1.0.0"
tool_type: graph
executor_id: rye/core/runtimes/state_graph_runtime
permissions:
  - rye.execute.tool.dirigent.util.*
config_schema:
  properties:
    topic: { type: string, default: "x" }
  required: [topic]
config:
  start: first
${extra}  nodes:
${nodes}`;
}

const OK = `    first:
      action: { item_id: "tool:dirigent/util/echo", params: { t: "\${inputs.topic}", deep: { list: ["\${inputs.topic}"] } } }
      assign: { echoed: "\${result.t}" }
      next:
        - to: done
          when: { path: state.echoed, op: eq, value: x }
        - to: other
    other:
      type: gate
      next: done
    done:
      type: return
      output: { echoed: "\${state.echoed}" }
`;

function failure(text: string): DirigentError {
  try {
    readGraph(text, FILE);
  } catch (err) {
    if (err instanceof DirigentError) return err;
    throw err;
  }
  throw new Error('the graph was accepted');
}

describe('readGraph', () => {
  it('reads nodes, edges, assigns, permissions, inputs and the return output into the directive AST', () => {
    const d = readGraph(graph(OK), FILE);
    expect(d).toMatchObject({
      name: 'review',
      returnsState: true,
      permissions: ['rye.execute.tool.dirigent.util.*'],
    });
    expect(d.inputs).toEqual([
      expect.objectContaining({ name: 'topic', type: 'string', required: true, default: 'x' }),
    ]);
    expect(d.process.map((n) => n.name)).toEqual(['first', 'other', 'done']);
    const first = d.process[0]!;
    expect(first.kind === 'step' && first.action.type === 'execute' && first.action.itemId).toBe(
      'dirigent/util/echo',
    );
    expect(first.next?.map((e) => e.to)).toEqual(['done', 'other']);
    expect(first.loc.line).toBe(14);
  });

  it('starts at config.start whatever the order of the nodes', () => {
    const d = readGraph(graph(OK).replace('start: first', 'start: other'), FILE);
    expect(d.process[0]!.name).toBe('other');
  });

  it('reports YAML that does not parse, at its line', () => {
    const err = failure(graph(OK) + '    broken: [unclosed\n');
    expect(err.code).toBe('INVALID_GRAPH');
    expect(err.location?.line).toBeGreaterThan(20);
  });

  it('refuses a YAML file that is not a state graph', () => {
    expect(failure('tool_id: x\nexecutor_id: y\n').code).toBe('INVALID_GRAPH');
  });

  it('reports a start node that does not exist, at config.start', () => {
    const err = failure(graph(OK).replace('start: first', 'start: frist'));
    expect(err.code).toBe('INVALID_GRAPH');
    expect(err.location?.line).toBe(12);
    expect(err.message).toContain('"frist"');
  });

  it('reports an edge to a node that does not exist, with a did-you-mean', () => {
    const err = failure(graph(OK.replace('- to: other', '- to: othr')));
    expect(err.code).toBe('UNKNOWN_STEP');
    expect(err.message).toContain('Did you mean "other"?');
  });

  it('reports an unknown node type and a node without an action', () => {
    const err = failure(graph(`${OK}    odd:\n      type: loop\n    empty:\n      next: done\n`));
    const codes = (err.details?.diagnostics as { code: string; message: string }[]).map(
      (d) => d.message,
    );
    expect(codes.some((m) => m.includes('unknown type "loop"'))).toBe(true);
    expect(codes.some((m) => m.includes('"empty" has no action'))).toBe(true);
  });
});

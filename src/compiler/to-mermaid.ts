import type { Condition, ProcessNode } from '../directive/ast.js';
import type { CompiledDirective } from './compiled-directive.js';

/** The compiled machine as a Mermaid flowchart: nodes, routes (with their conditions), on_error edges. */
export function toMermaid(compiled: CompiledDirective): string {
  const out = ['flowchart TD', '  start(((start)))', '  end_(((end)))'];
  const first = compiled.directive.process[0];
  out.push(`  start --> ${first ? id(first.name) : 'end_'}`);
  const declare = (nodes: ProcessNode[], indent: string): void => {
    for (const n of nodes) {
      if (n.kind === 'parallel') {
        out.push(`${indent}subgraph ${id(n.name)} ["${n.name} (parallel, ${n.onFailure})"]`);
        for (const b of n.branches) {
          out.push(`${indent}  subgraph ${id(b.name)} ["branch ${b.name}"]`);
          declare(b.nodes, `${indent}    `);
          out.push(`${indent}  end`);
        }
        out.push(`${indent}end`);
      } else {
        out.push(`${indent}${id(n.name)}["${escape(`${n.name}: ${describe(n)}`)}"]`);
      }
    }
  };
  declare(compiled.directive.process, '  ');
  for (const cn of compiled.nodes.values()) {
    const scopeEnd = cn.parallel === null ? 'end_' : null;
    for (const r of cn.routes) {
      const to = r.to === '$end' ? scopeEnd : id(r.to);
      if (to === null) continue;
      out.push(`  ${id(cn.name)} -->${r.when ? `|${escape(condition(r.when))}|` : ''} ${to}`);
    }
    if (cn.node.onError) out.push(`  ${id(cn.name)} -. on_error .-> ${id(cn.node.onError)}`);
  }
  return out.join('\n') + '\n';
}

function describe(n: ProcessNode & { kind: 'step' }): string {
  const a = n.action;
  switch (a.type) {
    case 'execute':
      return `${a.itemType} ${a.itemId}`;
    case 'foreach':
      return `foreach ${a.as} → ${a.execute.itemId}`;
    default:
      return a.type;
  }
}

/** A condition as one line of text: `inputs.mode eq "full"`, `not (…)`, `a or b`. */
export function condition(c: Condition): string {
  switch (c.kind) {
    case 'compare':
      return `${c.path} ${c.op} ${JSON.stringify(c.value)}`;
    case 'expr':
      return c.source;
    case 'not':
      return `not (${condition(c.of)})`;
    default:
      return c.of.map(condition).join(c.kind === 'any' ? ' or ' : ' and ');
  }
}

function id(name: string): string {
  return `n_${name.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

function escape(text: string): string {
  return text.replace(/"/g, '#quot;').replace(/\|/g, '#124;');
}

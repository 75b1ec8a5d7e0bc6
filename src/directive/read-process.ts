import { didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { Branch, ParallelNode, ProcessNode } from './ast.js';
import type { Diagnostics } from './diagnostics.js';
import { attrLoc, ElementReader } from './element-reader.js';
import { readControl } from './read-control.js';
import { checkName, readStep } from './read-step.js';
import { elementsOf, type XmlElement } from './xml-element.js';

const NODE_TAGS = ['step', 'parallel'];

/** Reads the children of `<process>` (or of a `<branch>`) in document order. */
export function readNodes(el: XmlElement, diag: Diagnostics): ProcessNode[] {
  const nodes: ProcessNode[] = [];
  for (const kid of elementsOf(el)) {
    if (kid.tag === 'step') {
      const step = readStep(kid, diag);
      if (step) nodes.push(step);
    } else if (kid.tag === 'parallel') {
      const p = readParallel(kid, diag);
      if (p) nodes.push(p);
    } else if (kid.tag === 'description') {
      continue;
    } else {
      diag.error(
        ErrorCode.UNKNOWN_ELEMENT,
        `<${el.tag}> holds <step> and <parallel> elements, not <${kid.tag}>.${didYouMean(kid.tag, NODE_TAGS)}`,
        kid.loc,
        `Write each unit of work as <step name="…">…</step>, and concurrent ones as <parallel name="…"><branch name="…">…</branch></parallel>.`,
      );
    }
  }
  return nodes;
}

function readParallel(el: XmlElement, diag: Diagnostics): ParallelNode | undefined {
  const r = new ElementReader(el, diag, ['name', 'on_failure', 'on_error'], ['name']);
  const name = checkName(el, diag);
  const control = readControl(el, name, diag);
  if (control.retry !== undefined || control.timeoutMs !== undefined) {
    diag.error(
      ErrorCode.UNKNOWN_ELEMENT,
      `<parallel name="${name}"> takes no <retry> or <timeout>.`,
      el.loc,
      'Put <retry> and <timeout> on the steps inside its branches.',
    );
  }
  const branches: Branch[] = [];
  for (const kid of elementsOf(el)) {
    if (kid.tag === 'branch') {
      new ElementReader(kid, diag, ['name'], ['name']);
      branches.push({ name: checkName(kid, diag), loc: kid.loc, nodes: readNodes(kid, diag) });
    } else if (
      ![
        'condition',
        'any',
        'all',
        'not',
        'assign',
        'next',
        'retry',
        'timeout',
        'description',
      ].includes(kid.tag)
    ) {
      diag.error(
        ErrorCode.UNKNOWN_ELEMENT,
        `<parallel name="${name}"> holds <branch> elements, not <${kid.tag}>.${didYouMean(kid.tag, ['branch'])}`,
        kid.loc,
        'Put steps inside <branch name="…"> elements; each branch runs its steps in order.',
      );
    }
  }
  if (branches.length === 0) {
    diag.error(
      ErrorCode.EMPTY_PROCESS,
      `<parallel name="${name}"> has no <branch>.`,
      el.loc,
      'Add <branch name="…"> elements holding steps.',
    );
    return undefined;
  }
  for (const b of branches) {
    if (b.nodes.length === 0)
      diag.error(
        ErrorCode.EMPTY_PROCESS,
        `Branch "${b.name}" of parallel "${name}" has no steps.`,
        b.loc,
        'Add <step> elements to the branch, or remove it.',
      );
  }
  return {
    kind: 'parallel',
    name,
    loc: el.loc,
    onFailure: r.oneOf('on_failure', ['fail_fast', 'continue'] as const, 'fail_fast'),
    onError: r.str('on_error'),
    ...(el.attrs.on_error !== undefined && { onErrorLoc: attrLoc(el, 'on_error') }),
    condition: control.condition,
    assigns: control.assigns,
    next: control.next,
    branches,
  };
}

/** A step's action: <execute>, <foreach>, <render>, <instruction> or <wait>. */
import { didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { Action, ExecuteAction, ParamSpec } from './ast.js';
import type { Diagnostics } from './diagnostics.js';
import { ElementReader } from './element-reader.js';
import { misplacedAnswer, readAnswers, textChildren } from './read-answers.js';
import { readValue, templateOrLiteral } from './read-value.js';
import { elementsOf, serializeChildren, type XmlElement } from './xml-element.js';

export function readAction(el: XmlElement, step: string, diag: Diagnostics): Action | undefined {
  switch (el.tag) {
    case 'execute':
      return readExecute(el, diag);
    case 'foreach': {
      const r = new ElementReader(el, diag, [
        'over',
        'expr',
        'as',
        'parallel',
        'collect',
        'on_failure',
      ]);
      const over =
        el.attrs.expr !== undefined
          ? { kind: 'expr' as const, source: el.attrs.expr }
          : el.attrs.over !== undefined
            ? templateOrLiteral(el.attrs.over)
            : undefined;
      if (over === undefined)
        diag.error(
          ErrorCode.MISSING_ATTRIBUTE,
          '<foreach> needs an "over" (or "expr") attribute.',
          el.loc,
          'Example: <foreach over="${inputs.files}" as="file">.',
        );
      const inner = elementsOf(el);
      const exec = inner.filter((k) => k.tag === 'execute');
      for (const k of inner) {
        if (k.tag === 'answer') misplacedAnswer(el, k, diag);
        else if (k.tag !== 'execute')
          diag.error(
            ErrorCode.UNKNOWN_ELEMENT,
            `<foreach> holds one <execute>, not <${k.tag}>.${didYouMean(k.tag, ['execute'])}`,
            k.loc,
            "A <foreach> holds only the <execute> run for each item; the step's <retry>, <compensate> and other elements stand beside the <foreach>, in the step.",
          );
      }
      if (exec.length !== 1) {
        diag.error(
          ErrorCode.STEP_ACTION,
          `<foreach> in step "${step}" holds ${exec.length === 0 ? 'no' : exec.length} <execute> elements; it must hold exactly one: the work done for each item.`,
          exec.length === 0 ? el.loc : exec[1]!.loc,
          'Example: <foreach over="${inputs.files}" as="file"><execute item_type="tool" item_id="…"><param name="path" value="${file}"/></execute></foreach>.',
        );
        return undefined;
      }
      const execute = readExecute(exec[0]!, diag);
      if (over === undefined || execute === undefined) return undefined;
      return {
        type: 'foreach',
        over,
        as: r.str('as') ?? 'item',
        parallel: r.int('parallel', 1) ?? 1,
        collect: r.str('collect'),
        onFailure: r.oneOf('on_failure', ['fail_fast', 'continue'] as const, 'fail_fast'),
        execute,
        loc: el.loc,
      };
    }
    case 'render':
      new ElementReader(el, diag, []);
      for (const kid of elementsOf(el)) if (kid.tag === 'answer') misplacedAnswer(el, kid, diag);
      return { type: 'render', template: serializeChildren(el.children).trim(), loc: el.loc };
    case 'instruction': {
      const seconds = new ElementReader(el, diag, ['timeout_seconds']).num('timeout_seconds');
      const answer = readAnswers(el, diag);
      const text = serializeChildren(textChildren(el.children)).trim();
      return {
        type: 'instruction',
        text,
        signal: step,
        timeoutMs: toMs(seconds),
        ...(answer && { answer }),
        loc: el.loc,
      };
    }
    case 'wait': {
      const r = new ElementReader(el, diag, ['signal', 'timeout_seconds']);
      const answer = readAnswers(el, diag);
      return {
        type: 'wait',
        signal: r.str('signal') ?? step,
        timeoutMs: toMs(r.num('timeout_seconds')),
        ...(answer && { answer }),
        loc: el.loc,
      };
    }
    default:
      return undefined;
  }
}

function toMs(seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : Math.round(seconds * 1000);
}

/** Reads `<execute item_type item_id>` and its `<param>` children. */
export function readExecute(el: XmlElement, diag: Diagnostics): ExecuteAction | undefined {
  const r = new ElementReader(el, diag, ['item_type', 'item_id'], ['item_id']);
  const itemType = r.oneOf('item_type', ['tool', 'directive'] as const, 'tool');
  const params: ParamSpec[] = [];
  for (const kid of elementsOf(el)) {
    if (kid.tag === 'answer') {
      misplacedAnswer(el, kid, diag);
      continue;
    }
    if (kid.tag !== 'param') {
      diag.error(
        ErrorCode.UNKNOWN_ELEMENT,
        `<execute> holds <param> elements, not <${kid.tag}>.${didYouMean(kid.tag, ['param'])}`,
        kid.loc,
        'Pass each parameter as <param name="…" value="…"/>.',
      );
      continue;
    }
    const attrs = new ElementReader(
      kid,
      diag,
      ['name', 'value', 'expr', 'type', 'allow_options'],
      ['name'],
    );
    const name = kid.attrs.name ?? '';
    const allowOptions = attrs.bool('allow_options') === true;
    const twice = params.find((p) => p.name === name);
    if (twice)
      diag.error(
        ErrorCode.INVALID_ATTRIBUTE,
        `Parameter "${name}" is given twice (first at line ${twice.loc.line}).`,
        kid.loc,
        'Keep one <param> per name.',
      );
    params.push({
      name,
      value: readValue(kid, diag, true) ?? { kind: 'literal', value: '' },
      loc: kid.loc,
      ...(allowOptions && { allowOptions }),
    });
  }
  if (el.attrs.item_id === undefined) return undefined;
  // Later RYE files write canonical refs: item_id="tool:rye/bash/bash" or "directive:x/y".
  const ref = /^(tool|directive):(.+)$/.exec(el.attrs.item_id);
  if (ref)
    return {
      type: 'execute',
      itemType: ref[1] as 'tool' | 'directive',
      itemId: ref[2]!,
      params,
      loc: el.loc,
    };
  return { type: 'execute', itemType, itemId: el.attrs.item_id, params, loc: el.loc };
}

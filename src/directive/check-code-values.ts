/**
 * Finds where a directive lets a value it does not control reach code: a shell command or URL
 * that is one value, a URL's host, and every place in a shell command where bash (or a program it
 * starts) would read a value as more than data (`values/shell-analysis.ts`): arithmetic, names,
 * text read again, another language's program text, an option position, the program itself.
 * Each is reported (`VALUE_AS_CODE`, a warning; an error in strict mode) with the construct and
 * the safe way to write it. Values of `{env:…}` are the operator's and never count. Inputs that
 * stand in such places are also noted on the directive (`Directive.valueChecks`), so that a run
 * whose inputs do not have the shape is refused before anything runs. Pure.
 */
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';
import { compileTemplate, type CompiledTemplate } from '../expr/template.js';
import { needsOf } from '../values/shell-render.js';
import { splitsLists } from '../values/shell-slot.js';
import { shellSlots } from '../values/shell-slots.js';
import type { Syntax } from '../values/syntax.js';
import { urlParts } from '../values/url-render.js';
import type { ValueShape } from '../values/value-shape.js';
import type { InputType } from './ast.js';
import type { ValidationContext } from './validation-context.js';

/** A `<param>` whose text is code in `syntax`. */
export interface CodeParam {
  itemId: string;
  param: string;
  source: string;
  syntax: Syntax | undefined;
  loc: SourceLocation;
  /** `allow_options="true"`: its values may be options. */
  allowOptions: boolean;
}

/** What the step needs of a value of each shape, in words. */
const RUNS_ONLY_WHEN: Record<ValueShape, string> = {
  integer: 'is an integer',
  name: 'is a variable name',
  'shell-words': 'is plain words (letters, digits, spaces and _ . , : / @ % + = -)',
  'code-word': 'is one plain word (letters, digits and _ . + -)',
  'not-option': 'does not begin with -',
  'no-options': 'has no word beginning with -',
  'one-word': 'has no blanks',
  nothing: 'is empty: whoever supplies it would choose the code that runs',
};

/** Input types whose every value has a shape already. */
const SAFE_TYPES: Partial<Record<ValueShape, readonly InputType[]>> = {
  integer: ['integer'],
  'not-option': ['integer', 'number', 'boolean'],
  'no-options': ['integer', 'number', 'boolean'],
  'shell-words': ['integer', 'number', 'boolean'],
  'code-word': ['integer', 'number', 'boolean'],
  'one-word': ['integer', 'number', 'boolean'],
};

/** Checks `p`; reports to `ctx.diag` and notes input checks on `ctx.d`. */
export function checkCodeValues(p: CodeParam, ctx: ValidationContext): void {
  if (p.syntax === undefined) return;
  let template: CompiledTemplate;
  try {
    template = compileTemplate(p.source);
  } catch {
    return; // a template that does not compile is reported where templates are checked
  }
  const controlled = (i: number) => template.slots[i]!.envName !== undefined;
  if (template.slots.every((_, i) => controlled(i))) return;
  const say = (message: string, hint: string) =>
    ctx.checks.strict
      ? ctx.diag.error(
          ErrorCode.VALUE_AS_CODE,
          `${message} (refused: the project is in strict mode).`,
          p.loc,
          hint,
        )
      : ctx.diag.warn(ErrorCode.VALUE_AS_CODE, `${message}.`, p.loc, hint);
  const label = (i: number) => template.slots[i]!.raw;
  const where = `${p.itemId}, param "${p.param}"`;
  if (isWhole(template)) {
    say(
      p.syntax === 'shell'
        ? `The command of ${where} is ${label(0)} and nothing else: whoever supplies that value chooses what runs`
        : `The URL of ${where} is ${label(0)} and nothing else: whoever supplies that value chooses where the request goes`,
      p.syntax === 'shell'
        ? `Write the command in the directive and pass values into it, e.g. value="grep -n -- '{input:pattern}' notes.txt"; keep the whole-value form only where running the caller's command is the point.`
        : 'Write the scheme and host in the directive and pass values in the path or query, e.g. value="https://api.example.com/items/{input:id}".',
    );
    return;
  }
  if (p.syntax === 'url') {
    urlParts(template.texts).forEach((part, i) => {
      if (part === 'origin' && !controlled(i)) {
        say(
          `${label(i)} stands in the host of the URL of ${where}: whoever supplies it chooses where the request goes`,
          'Write the scheme and host in the directive (or allow one of a few hosts with a condition) and pass values in the path or query.',
        );
      }
    });
    return;
  }
  shellSlots(template.texts).forEach((slot, i) => {
    if (controlled(i)) return;
    const needs = needsOf(slot, { allowOptions: p.allowOptions });
    if (needs.length === 0) return;
    const input = inputOf(label(i));
    const type =
      input === undefined ? undefined : ctx.d.inputs.find((d) => d.name === input.name)?.type;
    for (const need of needs) {
      if (type !== undefined && SAFE_TYPES[need.shape]?.includes(type)) continue;
      say(
        `${label(i)} stands in ${need.construct} (${where}): the step runs only when its value ${RUNS_ONLY_WHEN[need.shape]}`,
        need.hint.replaceAll('{value}', label(i)),
      );
    }
    if (input !== undefined) {
      ctx.d.valueChecks.push({
        input: input.name,
        path: input.path,
        label: label(i),
        needs: [...needs],
        eachElement: splitsLists(slot),
        loc: p.loc,
      });
    }
  });
}

/** The input a slot reads and nothing else (`{input:x}`, `${inputs.x.y}`), or undefined. */
function inputOf(raw: string): { name: string; path: string[] } | undefined {
  let refs;
  try {
    refs = compileTemplate(raw).refs;
  } catch {
    return undefined;
  }
  const [ref] = refs;
  if (refs.length !== 1 || ref === undefined || ref.root !== 'inputs' || ref.path.length === 0)
    return undefined;
  return { name: ref.path[0]!, path: ref.path.slice(1) };
}

function isWhole(template: CompiledTemplate): boolean {
  return template.slots.length === 1 && template.texts.every((t) => t === '');
}

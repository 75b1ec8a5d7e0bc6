/**
 * The `<answer>` children of an `<instruction>` or `<wait>`: what the step must be answered with
 * (see {@link AnswerDecl}). Named answers are the fields of an object; a single unnamed one types
 * the whole payload. Types are those of `<input>`.
 */
import { closest } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import { INPUT_TYPES, type AnswerDecl, type AnswerField, type AnswerType } from './ast.js';
import type { Diagnostics } from './diagnostics.js';
import { attrLoc, ElementReader } from './element-reader.js';
import { TYPE_ALIASES } from './type-aliases.js';
import { elementsOf, textOf, type XmlChild, type XmlElement } from './xml-element.js';

/** Answer names become template paths (`${result.NAME}`): letters, digits and `_`. */
const ANSWER_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** An unnamed `<answer>` as read: the type of the whole payload. */
type WholeAnswer = Extract<AnswerDecl, { kind: 'whole' }>;

/**
 * Reads the `<answer>` children of `el` (an `<instruction>` or a `<wait>`); undefined when it has
 * none. Every mistake is reported to `diag` at its place: an unknown type or attribute, a name
 * given twice, named answers beside an unnamed one, an unnamed one without a type.
 */
export function readAnswers(el: XmlElement, diag: Diagnostics): AnswerDecl | undefined {
  const fields: AnswerField[] = [];
  let whole: WholeAnswer | undefined;
  for (const kid of elementsOf(el)) {
    if (kid.tag !== 'answer') {
      checkOther(el, kid, diag);
      continue;
    }
    const r = new ElementReader(kid, diag, ['name', 'type', 'required']);
    const type: AnswerType = r.oneOf('type', INPUT_TYPES, 'string', TYPE_ALIASES);
    const required = r.bool('required') ?? false;
    for (const inner of elementsOf(kid))
      diag.error(
        ErrorCode.UNKNOWN_ELEMENT,
        `<answer> holds its description as text, not <${inner.tag}>.`,
        inner.loc,
        'Write the description as plain text: <answer name="approved" type="boolean">Whether to ship</answer>.',
      );
    const text = textOf(kid);
    const description = text === '' ? undefined : text;
    const name = kid.attrs.name;
    if (name === undefined) {
      const read = readWhole(el, kid, type, description, { whole, fields }, diag);
      whole ??= read;
      continue;
    }
    const field: AnswerField = { name, type, required, description, loc: kid.loc };
    if (checkField(el, kid, field, { whole, fields }, diag)) fields.push(field);
  }
  if (fields.length > 0) return { kind: 'fields', fields };
  return whole;
}

/** What was read before an `<answer>`. */
interface ReadSoFar {
  whole: WholeAnswer | undefined;
  fields: AnswerField[];
}

/** An unnamed `<answer>`: the type of the whole payload, unless it clashes with what came before. */
function readWhole(
  el: XmlElement,
  kid: XmlElement,
  type: AnswerType,
  description: string | undefined,
  before: ReadSoFar,
  diag: Diagnostics,
): WholeAnswer | undefined {
  if (kid.attrs.type === undefined)
    diag.error(
      ErrorCode.MISSING_ATTRIBUTE,
      `An <answer> without a name types the whole answer of <${el.tag}>, so it needs a "type" attribute.`,
      kid.loc,
      'Write <answer type="boolean"/> for a yes or no, or name the field: <answer name="approved" type="boolean"/>.',
    );
  if (kid.attrs.required !== undefined)
    diag.error(
      ErrorCode.INVALID_ATTRIBUTE,
      'An <answer> without a name types the whole answer, which is always required: "required" is for named answers.',
      attrLoc(kid, 'required'),
      'Remove required="…", or name the answer: <answer name="…" type="…" required="true"/>.',
    );
  if (before.whole !== undefined) {
    diag.error(
      ErrorCode.DUPLICATE_ANSWER,
      `<${el.tag}> has a second <answer> without a name (the first at line ${before.whole.loc.line}); one types the whole answer.`,
      kid.loc,
      'Keep one unnamed <answer>, or name each: <answer name="…" type="…"/> for the fields of an object.',
    );
    return undefined;
  }
  const named = before.fields[0];
  if (named !== undefined) {
    diag.error(
      ErrorCode.INVALID_ANSWER,
      `An <answer> without a name types the whole answer, but <${el.tag}> also has named answers (the first, "${named.name}", at line ${named.loc.line}).`,
      kid.loc,
      'Name this answer too (the answer is then an object with these fields), or remove the named ones.',
    );
    return undefined;
  }
  return { kind: 'whole', type, description, loc: kid.loc };
}

/** Whether a named `<answer>` can be a field: its name valid and new, no unnamed one before it. */
function checkField(
  el: XmlElement,
  kid: XmlElement,
  field: AnswerField,
  before: ReadSoFar,
  diag: Diagnostics,
): boolean {
  const { name } = field;
  if (!ANSWER_NAME.test(name)) {
    diag.error(
      ErrorCode.INVALID_NAME,
      `<answer name="${name}">: "${name}" is not a valid answer name; it is read as \${result.${name}}, so it uses letters, digits and "_", and starts with a letter or "_".`,
      attrLoc(kid, 'name'),
      `Write it as name="${name.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^(?=[^A-Za-z_])/, '_') || 'answer'}".`,
    );
    return false;
  }
  const first = before.fields.find((f) => f.name === name);
  if (first !== undefined) {
    diag.error(
      ErrorCode.DUPLICATE_ANSWER,
      `Answer "${name}" of <${el.tag}> is declared twice (first at line ${first.loc.line}).`,
      attrLoc(kid, 'name'),
      'Remove one of the two <answer> elements, or rename one.',
    );
    return false;
  }
  if (before.whole !== undefined) {
    diag.error(
      ErrorCode.INVALID_ANSWER,
      `<answer name="${name}"> is a field of an object, but <${el.tag}> has an <answer> without a name (line ${before.whole.loc.line}), which types the whole answer.`,
      kid.loc,
      'Name the other answer too (the answer is then an object with these fields), or remove the named ones.',
    );
    return false;
  }
  return true;
}

/**
 * Another element inside `el`: a `<wait>` holds only `<answer>`s; an `<instruction>` may hold
 * markup in its text, but a near miss of `<answer>` (`<anwser>`) is a mistake.
 */
function checkOther(el: XmlElement, kid: XmlElement, diag: Diagnostics): void {
  const typo = closest(kid.tag, ['answer']) !== undefined;
  if (el.tag !== 'wait' && !typo) return;
  diag.error(
    ErrorCode.UNKNOWN_ELEMENT,
    `<${el.tag}> ${el.tag === 'wait' ? 'holds <answer> elements' : 'declares its answer with <answer>'}, not <${kid.tag}>.${typo ? ' Did you mean "answer"?' : ''}`,
    kid.loc,
    'Declare each field of the answer as <answer name="…" type="string|integer|number|boolean|array|object" required="true">description</answer>.',
  );
}

/**
 * Reports `kid`, an `<answer>` inside `holder`, an element that waits for no answer (a `<render>`,
 * an `<execute>`, a `<foreach>`): only an `<instruction>` or a `<wait>` is answered.
 */
export function misplacedAnswer(holder: XmlElement, kid: XmlElement, diag: Diagnostics): void {
  diag.error(
    ErrorCode.INVALID_ANSWER,
    `<${holder.tag}> waits for no answer: <answer> declares what an <instruction> or a <wait> is answered with.`,
    kid.loc,
    'Move the <answer> into the <instruction> or <wait> of the step that is answered, or remove it.',
  );
}

/**
 * The children of an `<instruction>` that make its text: all but its `<answer>`s, each taken with
 * the line it stood on alone (the text keeps no blank line where it was).
 */
export function textChildren(children: XmlChild[]): XmlChild[] {
  const out: XmlChild[] = [];
  let dropLine = false;
  for (const c of children) {
    if (typeof c !== 'string') {
      if (c.tag !== 'answer') out.push(c);
      else {
        const before = out.at(-1);
        // Alone on its line: the indentation before it goes, and the line's end after it.
        dropLine = before === undefined || (typeof before === 'string' && /\n[ \t]*$/.test(before));
        if (typeof before === 'string' && dropLine)
          out[out.length - 1] = before.replace(/[ \t]*$/, '');
      }
      continue;
    }
    const text = dropLine ? c.replace(/^[ \t]*\n/, '') : c;
    if (text !== '') out.push(text);
    dropLine = false;
  }
  return out;
}

/**
 * Asking the person at a terminal for a waiting step's answer, as its `<answer>`s declare it: one
 * question per field (a boolean as y/n, a number until it reads as one, an array or object as
 * JSON; an optional field skipped with an empty line), or one question of the whole answer's type.
 * A step that declares nothing is answered with JSON, or else plain text. Typed text is read as
 * `--input` values are (`coerce-value.ts`).
 */
import type { AnswerFieldSpec, AnswerSpec } from '../directive/answer-spec.js';
import type { AnswerType } from '../directive/ast.js';
import { coerceValue } from '../directive/coerce-value.js';
import { parsePayload } from './parse-inputs.js';

/** Asks one question and resolves with the line typed. */
export type AskLine = (question: string) => Promise<string>;

/** The prompt of a step that declares no answer. */
export const FREE_ANSWER_PROMPT = 'answer (JSON or text) > ';

/**
 * Asks for an answer to a step that declares `spec` (or nothing), each value again until it reads
 * as its type, saying what is wrong through `say`; resolves with the payload to send.
 */
export async function askAnswer(
  spec: AnswerSpec | undefined,
  ask: AskLine,
  say: (line: string) => void,
): Promise<unknown> {
  if (spec === undefined) return parsePayload(await ask(FREE_ANSWER_PROMPT));
  if (spec.kind === 'whole') {
    if (spec.description !== undefined) say(spec.description);
    const value = await askValue(`answer${typeLabel(spec.type)}`, spec.type, true, ask, say);
    return value.given ? value.value : null;
  }
  const answer: Record<string, unknown> = {};
  for (const field of spec.fields) {
    if (field.description !== undefined) say(`${field.name}: ${field.description}`);
    const value = await askValue(fieldLabel(field), field.type, field.required, ask, say);
    if (value.given) answer[field.name] = value.value;
  }
  return answer;
}

/** `approved (boolean, required) [y/n]`. */
function fieldLabel(field: AnswerFieldSpec): string {
  const kind = `${field.type}${field.required ? ', required' : ', optional'}`;
  return `${field.name} (${kind})${field.type === 'boolean' ? ' [y/n]' : ''}`;
}

/** ` [y/n]`, ` (integer)`. */
function typeLabel(type: AnswerType): string {
  return type === 'boolean'
    ? ' [y/n]'
    : ` (${type}${type === 'array' || type === 'object' ? ', JSON' : ''})`;
}

/** Asks until the line reads as `type`; an empty line leaves an optional value out. */
async function askValue(
  label: string,
  type: AnswerType,
  required: boolean,
  ask: AskLine,
  say: (line: string) => void,
): Promise<{ given: true; value: unknown } | { given: false }> {
  for (;;) {
    const line = await ask(`${label} > `);
    if (line.trim() === '') {
      if (!required) return { given: false };
      say('  an answer is required.');
      continue;
    }
    const read = coerceValue(type === 'boolean' ? yesOrNo(line) : line, type);
    if (read.ok) return { given: true, value: read.value };
    say(`  ${JSON.stringify(line.trim())} is not ${HOW[type]}.`);
  }
}

/** What a value of each type is written as, for the message of one that is not. */
const HOW: Record<AnswerType, string> = {
  string: 'text',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'y or n',
  array: 'a JSON array, e.g. ["a", "b"]',
  object: 'a JSON object, e.g. {"key": "value"}',
};

/** `y` and `n` as the words {@link coerceValue} reads. */
function yesOrNo(line: string): string {
  const t = line.trim().toLowerCase();
  return t === 'y' ? 'yes' : t === 'n' ? 'no' : line;
}

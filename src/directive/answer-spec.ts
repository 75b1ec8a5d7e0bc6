/**
 * A waiting step's answer as every face sees it: its `<answer>` declarations without their places
 * in the file ({@link AnswerSpec}, carried by the run record's `waiting` entries, so a form can be
 * built without the directive), the JSON Schema a payload must match, what it reads as in a
 * sentence, and an example of it. Pure data.
 */
import type { AnswerDecl, AnswerType } from './action.js';

/** One field of an answer object. */
export interface AnswerFieldSpec {
  name: string;
  type: AnswerType;
  required: boolean;
  description?: string;
}

/**
 * What a waiting step must be answered with: an object of named fields, or one value of a type
 * (an unnamed `<answer>`). Plain JSON, small: it lives in the run record.
 */
export type AnswerSpec =
  | { kind: 'fields'; fields: AnswerFieldSpec[] }
  | { kind: 'whole'; type: AnswerType; description?: string };

/** A JSON Schema (draft 7 subset: `type`, `properties`, `required`, `additionalProperties`). */
export interface AnswerSchema {
  type: AnswerType;
  description?: string;
  properties?: Record<string, { type: AnswerType; description?: string }>;
  required?: string[];
  additionalProperties?: boolean;
}

/** The spec of a declaration: the declaration without its places in the file. */
export function answerSpecOf(decl: AnswerDecl): AnswerSpec {
  if (decl.kind === 'whole')
    return {
      kind: 'whole',
      type: decl.type,
      ...(decl.description !== undefined && { description: decl.description }),
    };
  return {
    kind: 'fields',
    fields: decl.fields.map((f) => ({
      name: f.name,
      type: f.type,
      required: f.required,
      ...(f.description !== undefined && { description: f.description }),
    })),
  };
}

/**
 * The JSON Schema a payload must match: the type of a whole answer, or an object of the declared
 * fields, the required ones present and no other.
 */
export function answerSchema(spec: AnswerSpec): AnswerSchema {
  if (spec.kind === 'whole')
    return {
      type: spec.type,
      ...(spec.description !== undefined && { description: spec.description }),
    };
  return {
    type: 'object',
    properties: Object.fromEntries(
      spec.fields.map((f) => [
        f.name,
        { type: f.type, ...(f.description !== undefined && { description: f.description }) },
      ]),
    ),
    required: spec.fields.filter((f) => f.required).map((f) => f.name),
    additionalProperties: false,
  };
}

/**
 * What the answer is, as a sentence part: `a boolean`, or `an object with approved (boolean,
 * required) and note (string)`.
 */
export function describeAnswer(spec: AnswerSpec): string {
  if (spec.kind === 'whole') return withArticle(spec.type);
  const fields = spec.fields.map((f) => `${f.name} (${f.type}${f.required ? ', required' : ''})`);
  const list =
    fields.length > 1 ? `${fields.slice(0, -1).join(', ')} and ${fields.at(-1)!}` : fields[0];
  return `an object with ${list}`;
}

/** An answer that matches `spec`, to show how one is written: `{"approved": true, "note": "…"}`. */
export function exampleAnswer(spec: AnswerSpec): unknown {
  if (spec.kind === 'whole') return exampleOf(spec.type);
  return Object.fromEntries(spec.fields.map((f) => [f.name, exampleOf(f.type)]));
}

/** `a boolean`, `an integer`. */
export function withArticle(type: string): string {
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

function exampleOf(type: AnswerType): unknown {
  switch (type) {
    case 'string':
      return '…';
    case 'integer':
      return 1;
    case 'number':
      return 1.5;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
  }
}

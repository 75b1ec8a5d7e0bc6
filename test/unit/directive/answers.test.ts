/**
 * What `<answer>` children make of an `<instruction>` or `<wait>`: the declaration in the AST, the
 * spec a run record carries (no places in the file), the JSON Schema a payload must match, and
 * how the answer is described and shown by example.
 */
import { describe, expect, it } from 'vitest';
import {
  answerSchema,
  answerSpecOf,
  describeAnswer,
  exampleAnswer,
} from '../../../src/directive/answer-spec.js';
import type { Action } from '../../../src/directive/ast.js';
import { parseDirective } from '../../../src/directive/parse-directive.js';

/** The action of the one step of a directive whose process is `step`. */
function actionOf(step: string): Action {
  const text = `# t\n\n\`\`\`xml\n<directive name="t" version="1.0.0"><process>\n${step}\n</process></directive>\n\`\`\`\n`;
  const node = parseDirective(text, 't.md').process[0]!;
  if (node.kind !== 'step') throw new Error('not a step');
  return node.action;
}

const at = (line: number, column: number) => ({ file: 't.md', line, column });

describe('<answer> declarations', () => {
  it('named answers are the fields of an object, typed, required or not, with their descriptions and places; the text leaves them out', () => {
    const action = actionOf(`<step name="review"><instruction>Ship it?
<answer name="approved" type="boolean" required="true">Whether it ships</answer>
<answer name="note"/>
Then say why.</instruction></step>`);
    expect(action).toEqual({
      type: 'instruction',
      text: 'Ship it?\nThen say why.',
      signal: 'review',
      timeoutMs: undefined,
      answer: {
        kind: 'fields',
        fields: [
          {
            name: 'approved',
            type: 'boolean',
            required: true,
            description: 'Whether it ships',
            loc: at(6, 1),
          },
          { name: 'note', type: 'string', required: false, description: undefined, loc: at(7, 1) },
        ],
      },
      loc: at(5, 21),
    });
  });

  it('a single unnamed answer types the whole payload of a <wait>', () => {
    expect(
      actionOf(
        `<step name="w"><wait signal="go"><answer type="integer">Minutes</answer></wait></step>`,
      ),
    ).toMatchObject({
      type: 'wait',
      signal: 'go',
      answer: { kind: 'whole', type: 'integer', description: 'Minutes' },
    });
  });

  it('an instruction or wait without <answer> declares nothing: any payload is its answer', () => {
    expect(actionOf('<step name="w"><wait signal="go"/></step>')).not.toHaveProperty('answer');
    expect(actionOf('<step name="i"><instruction>Do it.</instruction></step>')).not.toHaveProperty(
      'answer',
    );
  });
});

describe('the answer spec, its schema and its description', () => {
  const fields = answerSpecOf({
    kind: 'fields',
    fields: [
      { name: 'approved', type: 'boolean', required: true, description: 'Ships?', loc: at(1, 1) },
      { name: 'days', type: 'integer', required: false, description: undefined, loc: at(2, 1) },
    ],
  });
  const whole = answerSpecOf({
    kind: 'whole',
    type: 'number',
    description: undefined,
    loc: at(1, 1),
  });

  it('leaves the places in the file out: it is what a run record carries', () => {
    expect(fields).toEqual({
      kind: 'fields',
      fields: [
        { name: 'approved', type: 'boolean', required: true, description: 'Ships?' },
        { name: 'days', type: 'integer', required: false },
      ],
    });
    expect(whole).toEqual({ kind: 'whole', type: 'number' });
  });

  it('makes an object schema of the fields (the required ones required, no other field) or the type of a whole answer', () => {
    expect(answerSchema(fields)).toEqual({
      type: 'object',
      properties: {
        approved: { type: 'boolean', description: 'Ships?' },
        days: { type: 'integer' },
      },
      required: ['approved'],
      additionalProperties: false,
    });
    expect(answerSchema(whole)).toEqual({ type: 'number' });
  });

  it('says what the answer is, and shows one', () => {
    expect(describeAnswer(fields)).toBe(
      'an object with approved (boolean, required) and days (integer)',
    );
    expect(describeAnswer(whole)).toBe('a number');
    expect(exampleAnswer(fields)).toEqual({ approved: true, days: 1 });
    expect(exampleAnswer(whole)).toBe(1.5);
  });
});

/**
 * The terminal's answer prompt: one question per declared field, each asked again until it reads
 * as its type, optional fields left out with an empty line; a whole answer in one question; an
 * undeclared answer as JSON, or else text.
 */
import { describe, expect, it } from 'vitest';
import { askAnswer, FREE_ANSWER_PROMPT } from '../../../src/cli/answer-prompt.js';

/** Answers the questions with `lines` in turn; records the questions and what was said. */
function terminal(lines: string[]) {
  const asked: string[] = [];
  const said: string[] = [];
  const ask = (question: string) => {
    asked.push(question);
    const line = lines.shift();
    if (line === undefined) throw new Error(`no answer left for "${question}"`);
    return Promise.resolve(line);
  };
  return { asked, said, ask, say: (line: string) => said.push(line) };
}

describe('the answer prompt', () => {
  it('asks for each field as its type, again until it reads, and leaves out an optional one left empty', async () => {
    const t = terminal(['maybe', 'y', '', 'x', '3', '']);
    const answer = await askAnswer(
      {
        kind: 'fields',
        fields: [
          { name: 'approved', type: 'boolean', required: true, description: 'Ships?' },
          { name: 'days', type: 'integer', required: true },
          { name: 'note', type: 'string', required: false },
        ],
      },
      t.ask,
      t.say,
    );
    expect(answer).toEqual({ approved: true, days: 3 });
    expect(t.asked).toEqual([
      'approved (boolean, required) [y/n] > ',
      'approved (boolean, required) [y/n] > ',
      'days (integer, required) > ',
      'days (integer, required) > ',
      'days (integer, required) > ',
      'note (string, optional) > ',
    ]);
    expect(t.said).toEqual([
      'approved: Ships?',
      '  "maybe" is not y or n.',
      '  an answer is required.',
      '  "x" is not a whole number.',
    ]);
  });

  it('asks once for a whole answer of its type, arrays and objects as JSON', async () => {
    const t = terminal(['{"a": 1}']);
    expect(await askAnswer({ kind: 'whole', type: 'object' }, t.ask, t.say)).toEqual({ a: 1 });
    expect(t.asked).toEqual(['answer (object, JSON) > ']);
  });

  it('reads an undeclared answer as JSON, or else as text', async () => {
    const t = terminal(['{"ok": true}', 'ship it']);
    expect(await askAnswer(undefined, t.ask, t.say)).toEqual({ ok: true });
    expect(await askAnswer(undefined, t.ask, t.say)).toBe('ship it');
    expect(t.asked).toEqual([FREE_ANSWER_PROMPT, FREE_ANSWER_PROMPT]);
  });
});

import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { acceptSimpleParams } from '../../../src/tools/accept-simple-params.js';
import { BUILTIN_TOOLS } from '../../../src/tools/builtin/index.js';
import { bashTool } from '../../../src/tools/builtin/bash.js';
import { SYNTAX_KEYWORD } from '../../../src/values/syntax.js';

const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true });
ajv.addKeyword(SYNTAX_KEYWORD);

/** What ajv makes of `params` (validity, and the params after coercion and defaults). */
function byAjv(schema: object, params: Record<string, unknown>): [boolean, unknown] {
  const copy = structuredClone(params);
  return [ajv.compile(schema)(copy), copy];
}

describe('acceptSimpleParams', () => {
  it('takes plain bash parameters and fills the defaults ajv fills', () => {
    const params: Record<string, unknown> = { command: 'echo hi', env: { A_1: 'x' } };
    expect(acceptSimpleParams(bashTool.paramsSchema, params)).toBe(true);
    expect(params).toEqual({ command: 'echo hi', env: { A_1: 'x' }, timeout: 120 });
  });

  it('leaves to ajv, untouched, what needs coercion, breaks a rule, or is too close to call', () => {
    for (const params of [
      { command: 'echo hi', timeout: '10' },
      { command: 'echo hi', timeout: 0 },
      { command: 'echo hi', timeout: 1.5 },
      { command: '' },
      { command: 'x' },
      { command: 'echo hi', env: { 'not a name': 'x' } },
      { command: 'echo hi', env: { A: 1 } },
      { command: 'echo hi', cmd: 'typo' },
      { command: undefined },
      {},
    ] as Record<string, unknown>[]) {
      const before = structuredClone(params);
      expect(acceptSimpleParams(bashTool.paramsSchema, params)).toBe(false);
      expect(params).toEqual(before);
    }
  });

  it('accepts only what ajv accepts, with the same result, for every built-in tool', () => {
    const samples: Record<string, unknown>[] = [
      {},
      { command: 'echo hi' },
      { message: 'hello' },
      { path: 'a.txt' },
      { path: 'a.txt', content: 'text' },
      { seconds: 1 },
      { ms: 5 },
      { command: 'echo hi', timeout: 30, working_dir: 'sub' },
    ];
    for (const tool of BUILTIN_TOOLS)
      for (const sample of samples) {
        const params = structuredClone(sample);
        if (acceptSimpleParams(tool.paramsSchema, params))
          expect([true, params], tool.itemId).toEqual(byAjv(tool.paramsSchema, sample));
      }
  });

  it('takes no schema it does not understand', () => {
    const schema = { type: 'object', properties: { a: { type: 'string', enum: ['x'] } } };
    expect(acceptSimpleParams(schema, { a: 'y' })).toBe(false);
    expect(acceptSimpleParams({ type: 'object', anyOf: [] }, {})).toBe(false);
  });
});

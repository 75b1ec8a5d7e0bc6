import { thrown } from '../../support/thrown.js';
import { describe, expect, it } from 'vitest';
import type { CompareOp, Condition } from '../../../src/directive/ast.js';
import { ErrorCode } from '../../../src/errors/index.js';
import {
  compareValues,
  evaluateCondition,
  isTruthy,
  looseEquals,
  resolveConditionPath,
  type Scope,
} from '../../../src/expr/index.js';

const scope: Scope = {
  inputs: { mode: 'full', limit: 10, tags: ['a', 'b'] },
  state: { count: 2, files: [{ path: 'a.txt' }], done: false },
  steps: { check: { status: 'completed', result: { stdout: '42\n', ok: 'true\n' } } },
  result: { stdout: '3\n', text: 'Build OK' },
  error: undefined,
  env: { SECRET: 's3cr3t' },
  vars: { item: { name: 'x' }, item_index: 1 },
};

const cmp = (path: string, op: CompareOp, value: unknown): Condition => ({
  kind: 'compare',
  path,
  op,
  value,
});
const holds = (cond: Condition): boolean => evaluateCondition(cond, scope);

describe('condition paths', () => {
  it('resolve against inputs, state, steps, result, error and loop variables', () => {
    expect(resolveConditionPath('inputs.mode', scope)).toBe('full');
    expect(resolveConditionPath('state.files.0.path', scope)).toBe('a.txt');
    expect(resolveConditionPath('steps.check.result.stdout', scope)).toBe('42\n');
    expect(resolveConditionPath('result.text', scope)).toBe('Build OK');
    expect(resolveConditionPath('item.name', scope)).toBe('x');
    expect(resolveConditionPath('item_index', scope)).toBe(1);
  });

  it('give undefined on any miss, and never reach the environment', () => {
    expect(resolveConditionPath('state.nope.deeper', scope)).toBeUndefined();
    expect(resolveConditionPath('error.message', scope)).toBeUndefined();
    expect(resolveConditionPath('env.SECRET', scope)).toBeUndefined();
    expect(resolveConditionPath('', scope)).toBeUndefined();
  });
});

describe('eq / ne', () => {
  it('compare deeply', () => {
    expect(holds(cmp('inputs.mode', 'eq', 'full'))).toBe(true);
    expect(holds(cmp('inputs.tags', 'eq', ['a', 'b']))).toBe(true);
    expect(holds(cmp('state.files', 'eq', [{ path: 'a.txt' }]))).toBe(true);
    expect(holds(cmp('state.files', 'eq', [{ path: 'a.txt', x: 1 }]))).toBe(false);
    expect(holds(cmp('inputs.mode', 'ne', 'quick'))).toBe(true);
    expect(holds(cmp('inputs.mode', 'ne', 'full'))).toBe(false);
  });

  it('treat a number and a string holding that number as equal, trailing newline of bash stdout included', () => {
    expect(holds(cmp('steps.check.result.stdout', 'eq', 42))).toBe(true);
    expect(holds(cmp('result.stdout', 'eq', 3))).toBe(true);
    expect(holds(cmp('inputs.limit', 'eq', '10'))).toBe(true);
    expect(holds(cmp('inputs.limit', 'eq', ' 10.0 '))).toBe(true);
    expect(holds(cmp('inputs.limit', 'eq', '0xA'))).toBe(false);
    expect(holds(cmp('inputs.limit', 'eq', ''))).toBe(false);
    expect(holds(cmp('steps.check.result.stdout', 'ne', 42))).toBe(false);
  });

  it('treat a boolean and the text "true" / "false" as equal', () => {
    expect(holds(cmp('steps.check.result.ok', 'eq', true))).toBe(true);
    expect(holds(cmp('state.done', 'eq', 'false'))).toBe(true);
    expect(holds(cmp('state.done', 'eq', 'no'))).toBe(false);
    expect(looseEquals(true, 1)).toBe(false);
  });

  it('compare two strings exactly', () => {
    expect(looseEquals('done\n', 'done')).toBe(false);
    expect(looseEquals('42', '42.0')).toBe(false);
  });

  it('treat a missing path as equal to null', () => {
    expect(holds(cmp('state.nope', 'eq', null))).toBe(true);
    expect(holds(cmp('state.nope', 'eq', ''))).toBe(false);
    expect(holds(cmp('state.nope', 'ne', 'x'))).toBe(true);
  });
});

describe('gt / gte / lt / lte', () => {
  it('compare numbers and numeric strings as numbers', () => {
    expect(compareValues(10, 'gt', 9)).toBe(true);
    expect(compareValues('10', 'gt', '9')).toBe(true);
    expect(compareValues('42\n', 'gte', 42)).toBe(true);
    expect(compareValues('3\n', 'lt', 10)).toBe(true);
    expect(compareValues(2, 'lte', '2')).toBe(true);
    expect(compareValues(2, 'lt', 2)).toBe(false);
    expect(holds(cmp('state.count', 'lt', 3))).toBe(true);
  });

  it('compare other values lexicographically as text', () => {
    expect(compareValues('b', 'gt', 'a')).toBe(true);
    expect(compareValues('10', 'gt', 'abc')).toBe(false);
    expect(compareValues('2024-02-01', 'gt', '2024-01-31')).toBe(true);
    expect(compareValues('abc', 'lte', 'abc')).toBe(true);
  });

  it('are false when the actual value is null or missing', () => {
    for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
      expect(compareValues(undefined, op, 0)).toBe(false);
      expect(compareValues(null, op, 0)).toBe(false);
      expect(holds(cmp('state.nope', op, 0))).toBe(false);
    }
  });
});

describe('in / contains / regex / exists', () => {
  it('in: the actual value is an element of the list, with the same coercions as eq', () => {
    expect(holds(cmp('inputs.mode', 'in', ['quick', 'full']))).toBe(true);
    expect(holds(cmp('inputs.mode', 'in', ['quick']))).toBe(false);
    expect(holds(cmp('steps.check.result.stdout', 'in', [41, 42]))).toBe(true);
    expect(holds(cmp('state.nope', 'in', ['x']))).toBe(false);
    expect(compareValues('ful', 'in', 'full, quick')).toBe(true);
    expect(compareValues('x', 'in', 5)).toBe(false);
  });

  it('contains: an array has the element, or the text includes the value', () => {
    expect(holds(cmp('inputs.tags', 'contains', 'b'))).toBe(true);
    expect(holds(cmp('inputs.tags', 'contains', 'c'))).toBe(false);
    expect(holds(cmp('result.text', 'contains', 'OK'))).toBe(true);
    expect(compareValues(12345, 'contains', 234)).toBe(true);
    expect(compareValues([1, 2], 'contains', '2')).toBe(true);
    expect(compareValues({ a: 'needle' }, 'contains', 'needle')).toBe(true);
    expect(holds(cmp('state.nope', 'contains', ''))).toBe(false);
  });

  it('regex: searches the text of the actual value', () => {
    expect(holds(cmp('result.text', 'regex', '^Build (OK|PASS)$'))).toBe(true);
    expect(holds(cmp('result.text', 'regex', 'fail'))).toBe(false);
    expect(holds(cmp('steps.check.result.stdout', 'regex', '^\\d+\\s*$'))).toBe(true);
    expect(compareValues(404, 'regex', '^4\\d\\d$')).toBe(true);
    expect(holds(cmp('state.nope', 'regex', '.*'))).toBe(false);
  });

  it('regex: a bad pattern throws INVALID_CONDITION', () => {
    const err = thrown(() => holds(cmp('result.text', 'regex', '(unclosed')));
    expect(err.code).toBe(ErrorCode.INVALID_CONDITION);
    expect(err.message).toContain('/(unclosed/');
  });

  it('exists: the value is neither null nor undefined; with value false, the reverse', () => {
    expect(holds(cmp('state.done', 'exists', true))).toBe(true);
    expect(holds(cmp('state.nope', 'exists', true))).toBe(false);
    expect(holds(cmp('state.nope', 'exists', undefined))).toBe(false);
    expect(holds(cmp('state.nope', 'exists', false))).toBe(true);
    expect(holds(cmp('state.done', 'exists', false))).toBe(false);
    expect(compareValues(null, 'exists', true)).toBe(false);
  });
});

describe('any / all / not', () => {
  const yes = cmp('inputs.mode', 'eq', 'full');
  const no = cmp('inputs.mode', 'eq', 'quick');

  it('any holds when one holds, and not when empty', () => {
    expect(holds({ kind: 'any', of: [no, yes] })).toBe(true);
    expect(holds({ kind: 'any', of: [no, no] })).toBe(false);
    expect(holds({ kind: 'any', of: [] })).toBe(false);
  });

  it('all holds when every one holds, and when empty', () => {
    expect(holds({ kind: 'all', of: [yes, yes] })).toBe(true);
    expect(holds({ kind: 'all', of: [yes, no] })).toBe(false);
    expect(holds({ kind: 'all', of: [] })).toBe(true);
  });

  it('not inverts, and combinators nest', () => {
    expect(holds({ kind: 'not', of: no })).toBe(true);
    expect(holds({ kind: 'not', of: { kind: 'any', of: [no, { kind: 'all', of: [yes] }] } })).toBe(
      false,
    );
  });
});

describe('expression conditions', () => {
  it('use the truthiness of a JSONata result', () => {
    expect(holds({ kind: 'expr', source: 'state.count > 1' })).toBe(true);
    expect(holds({ kind: 'expr', source: 'inputs.mode = "quick"' })).toBe(false);
    expect(holds({ kind: 'expr', source: 'state.nope' })).toBe(false);
    expect(holds({ kind: 'expr', source: 'item.name = "x" and item_index = 1' })).toBe(true);
    expect(holds({ kind: 'expr', source: '$count(state.files) > 0' })).toBe(true);
  });

  it('count undefined, null, false, 0, "" and [] as false', () => {
    for (const value of [undefined, null, false, 0, NaN, '', []])
      expect(isTruthy(value)).toBe(false);
    for (const value of [true, 1, 'x', [0], {}]) expect(isTruthy(value)).toBe(true);
  });

  it('cannot read the environment', () => {
    expect(holds({ kind: 'expr', source: '$exists(env)' })).toBe(false);
  });
});

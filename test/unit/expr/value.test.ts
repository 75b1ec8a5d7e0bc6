import { describe, expect, it } from 'vitest';
import { evaluateValue, type Scope } from '../../../src/expr/index.js';

const scope: Scope = {
  inputs: { name: 'world' },
  state: { files: ['a', 'b'], i: 1 },
  steps: {},
};

describe('evaluateValue', () => {
  it('returns a literal as it is, without interpolating it', () => {
    const value = { a: '${state.i}' };
    expect(evaluateValue({ kind: 'literal', value }, scope)).toBe(value);
  });

  it('evaluates a template, keeping the type of a whole one', () => {
    expect(evaluateValue({ kind: 'template', source: '${state.files}' }, scope)).toEqual([
      'a',
      'b',
    ]);
    expect(evaluateValue({ kind: 'template', source: 'hi {input:name}' }, scope)).toBe('hi world');
  });

  it('evaluates a JSONata expression', () => {
    expect(evaluateValue({ kind: 'expr', source: 'state.i + 1' }, scope)).toBe(2);
    expect(evaluateValue({ kind: 'expr', source: '$count(state.files)' }, scope)).toBe(2);
  });
});

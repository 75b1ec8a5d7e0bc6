import { describe, expect, it } from 'vitest';
import { arrayIndex, explainMiss, getPath, splitPath } from '../../../src/expr/index.js';

describe('splitPath', () => {
  it('splits on dots and keeps numeric segments as strings', () => {
    expect(splitPath('state.files.0.path')).toEqual(['state', 'files', '0', 'path']);
  });

  it('gives no segments for the empty path', () => {
    expect(splitPath('')).toEqual([]);
  });
});

describe('getPath', () => {
  const data = { a: { b: [10, { c: 'x' }], n: null, z: 0 } };

  it('walks objects by key and arrays by integer index', () => {
    expect(getPath(data, ['a', 'b', '1', 'c'])).toEqual({ found: true, value: 'x' });
    expect(getPath(data, ['a', 'b', '0'])).toEqual({ found: true, value: 10 });
  });

  it('returns the root itself for no segments', () => {
    expect(getPath(data, [])).toEqual({ found: true, value: data });
  });

  it('finds present null and falsy values', () => {
    expect(getPath(data, ['a', 'n'])).toEqual({ found: true, value: null });
    expect(getPath(data, ['a', 'z'])).toEqual({ found: true, value: 0 });
  });

  it('reports any miss as not found', () => {
    expect(getPath(data, ['a', 'missing']).found).toBe(false);
    expect(getPath(data, ['a', 'b', '2']).found).toBe(false);
    expect(getPath(data, ['a', 'b', 'length']).found).toBe(false);
    expect(getPath(data, ['a', 'n', 'x']).found).toBe(false);
    expect(getPath(data, ['a', 'z', 'x']).found).toBe(false);
    expect(getPath(undefined, []).found).toBe(false);
  });

  it('only sees own properties, never the prototype', () => {
    expect(getPath({}, ['constructor']).found).toBe(false);
    expect(getPath({}, ['__proto__']).found).toBe(false);
    expect(getPath({}, ['toString']).found).toBe(false);
  });

  it('indexes arrays only with canonical non-negative integers', () => {
    const list = ['zero', 'one'];
    expect(getPath(list, ['01']).found).toBe(false);
    expect(getPath(list, ['-1']).found).toBe(false);
    expect(getPath(list, ['1.0']).found).toBe(false);
    expect(getPath(list, [' 1']).found).toBe(false);
    expect(getPath(list, ['1'])).toEqual({ found: true, value: 'one' });
    expect(arrayIndex('12')).toBe(12);
    expect(arrayIndex('1e1')).toBe(-1);
  });
});

describe('explainMiss', () => {
  it('names the missing segment, where it was looked for, and the keys that exist', () => {
    const state = { count: 1, files: [] };
    expect(explainMiss(state, ['state', 'cnt']).message).toBe(
      '"cnt" is not set in state (it has: count, files)',
    );
  });

  it('describes arrays, empty objects and primitives in the way', () => {
    const root = { files: [1, 2], empty: {}, text: 'x' };
    expect(explainMiss(root, ['state', 'files', '5']).message).toBe(
      '"5" is not set in state.files (it is an array of 2 items)',
    );
    expect(explainMiss(root, ['state', 'files', 'name']).message).toContain(
      'index it with a number',
    );
    expect(explainMiss(root, ['state', 'empty', 'x']).message).toContain('(it is empty)');
    expect(explainMiss(root, ['state', 'text', 'x']).message).toBe(
      '"x" is not set in state.text (it is a string)',
    );
  });
});

import { describe, expect, it } from 'vitest';
import { compileExpression } from '../../../src/expr/index.js';

/** The paths an expression reads from the data, in dots. */
const paths = (source: string): string[] =>
  compileExpression(source)
    .reads.paths.map((p) => p.raw)
    .sort();
/** The `$names` it leaves unbound. */
const unbound = (source: string): string[] =>
  compileExpression(source)
    .reads.unbound.map((n) => `${n.called ? 'call ' : ''}$${n.name}`)
    .sort();

describe('what an expression reads of the data', () => {
  it('a path at the top names its root and the keys after it', () => {
    expect(paths('inputs.treshold > 3')).toEqual(['inputs.treshold']);
    expect(compileExpression('steps.fetch.result.items').reads.paths[0]).toMatchObject({
      root: 'steps',
      path: ['fetch', 'result', 'items'],
    });
  });

  it('operands, arguments, conditions, arrays, objects and blocks are read from the data', () => {
    expect(paths('$sum(state.sizes) + $count(inputs.words)')).toEqual([
      'inputs.words',
      'state.sizes',
    ]);
    expect(paths('inputs.a ? state.b : error.message')).toEqual([
      'error.message',
      'inputs.a',
      'state.b',
    ]);
    expect(paths('[inputs.a, {"k": state.b}]')).toEqual(['inputs.a', 'state.b']);
    expect(paths('(inputs.a; -state.n)')).toEqual(['inputs.a', 'state.n']);
    expect(paths('result.stdout ~> $trim()')).toEqual(['result.stdout']);
  });

  it('names after the first step, in filters, groups and sort terms are relative: left alone', () => {
    expect(paths('state.items[price > 3].name')).toEqual(['state.items']);
    expect(paths('state.l{name: size}')).toEqual(['state.l']);
    expect(paths('state.l^(>price)')).toEqual(['state.l']);
    expect(paths('steps.a.result.(name & "x")')).toEqual(['steps.a.result']);
  });

  it('$ at the top and $$ anywhere are the data; a path through a variable is left alone', () => {
    expect(paths('$.inputs.a')).toEqual(['inputs.a']);
    expect(paths('state.l[$$.inputs.k = id]')).toEqual(['inputs.k', 'state.l']);
    expect(paths('($x := inputs.a; $x.b)')).toEqual(['inputs.a']);
  });

  it('a lambda body keeps the context it is written in', () => {
    expect(paths('$map(state.l, function($v) { $v.a + inputs.k })')).toEqual([
      'inputs.k',
      'state.l',
    ]);
  });

  it('what follows a filter on the path is not a key of it', () => {
    expect(compileExpression('state.files[0].path').reads.paths[0]!.path).toEqual(['files']);
  });
});

describe('variables and functions an expression leaves unbound', () => {
  it("JSONata's functions, $parse and the expression's own bindings are bound", () => {
    expect(unbound('$sum($map(state.l, function($v) { $v * 2 }))')).toEqual([]);
    expect(unbound('($f := function($x) { $x + 1 }; $f(2))')).toEqual([]);
    expect(unbound('$parse(result.stdout).count')).toEqual([]);
    expect(unbound('$now() & $string($millis())')).toEqual([]);
    expect(unbound('state.l@$e#$i.($e & $i)')).toEqual([]);
  });

  it('a misspelt function or a loop variable is unbound, called or read', () => {
    expect(unbound('$sumx(state.l)')).toEqual(['call $sumx']);
    expect(unbound('$item.name & $string($item_index)')).toEqual(['$item', '$item_index']);
  });

  it('$eval stays refused wherever it is named', () => {
    for (const source of ['$eval("1")', '($f := $eval; $f("1"))', '$map([1], $eval)'])
      expect(() => compileExpression(source), source).toThrow(/\$eval is not available/);
  });
});

import { thrown } from '../../support/thrown.js';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/errors/index.js';
import { compileExpression, evaluateValue, type Scope } from '../../../src/expr/index.js';

const scope: Scope = {
  inputs: { n: 3, words: ['a', 'bb', 'ccc'] },
  state: {
    i: 4,
    sizes: [10, 20, 30],
    files: [
      { path: 'a', size: 1 },
      { path: 'b', size: 2 },
    ],
  },
  steps: { list: { status: 'completed', result: { count: 2 } } },
  result: { stdout: 'hi\n' },
  error: { code: 'TOOL_FAILED', message: 'boom' },
  env: { SECRET: 's3cr3t' },
  vars: { item: { name: 'x' }, item_index: 2 },
};

const run = (source: string, s: Scope = scope): unknown => compileExpression(source).evaluate(s);

describe('JSONata evaluation', () => {
  it('evaluates over inputs, state, steps, result and error', () => {
    expect(run('state.i + 1')).toBe(5);
    expect(run('$sum(state.sizes)')).toBe(60);
    expect(run('inputs.n * steps.list.result.count')).toBe(6);
    expect(run('$trim(result.stdout)')).toBe('hi');
    expect(run('error.code')).toBe('TOOL_FAILED');
  });

  it('sees loop variables as top-level names and as $variables', () => {
    expect(run('item.name & "-" & $string(item_index)')).toBe('x-2');
    expect(run('$item.name')).toBe('x');
  });

  it('returns undefined when nothing is selected', () => {
    expect(run('state.nope')).toBeUndefined();
  });

  it('returns sequences as plain arrays, deeply', () => {
    const paths = run('state.files.path');
    expect(paths).toEqual(['a', 'b']);
    expect(Object.keys(paths as object)).toEqual(['0', '1']);
    expect(JSON.parse(JSON.stringify(paths))).toEqual(paths);
    const built = run('{"doubled": inputs.words.($length($)), "nested": [[state.sizes[0]]]}');
    expect(built).toEqual({ doubled: [1, 2, 3], nested: [[10]] });
    const doubled = (built as { doubled: unknown[] }).doubled;
    expect((doubled as unknown as { sequence?: boolean }).sequence).toBeUndefined();
  });

  it('returns data taken from the input unchanged', () => {
    expect(run('state.files')).toBe(scope.state.files);
  });

  it('turns a function result into undefined', () => {
    expect(run('function($x) { $x }')).toBeUndefined();
  });

  it('has no access to the environment', () => {
    expect(run('env')).toBeUndefined();
    expect(run('$keys($)')).toEqual([
      'item',
      'item_index',
      'inputs',
      'state',
      'steps',
      'result',
      'error',
    ]);
  });

  it('is compiled once per source', () => {
    expect(compileExpression('state.i')).toBe(compileExpression('state.i'));
  });

  it('is reachable through evaluateValue', () => {
    expect(evaluateValue({ kind: 'expr', source: 'state.i * 2' }, scope)).toBe(8);
  });
});

describe('errors', () => {
  it('a syntax error throws INVALID_EXPRESSION with JSONata message and position', () => {
    const err = thrown(() => compileExpression('state.i +'));
    expect(err.code).toBe(ErrorCode.INVALID_EXPRESSION);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('"state.i +"');
    expect(err.message).toContain('Unexpected end of expression');
    expect(err.message).toMatch(/at position \d+/);
    expect(err.details).toMatchObject({ jsonataCode: 'S0207' });
  });

  it('an empty expression is invalid', () => {
    expect(thrown(() => compileExpression('  ')).code).toBe(ErrorCode.INVALID_EXPRESSION);
  });

  it('an evaluation error throws EXPRESSION_FAILED with JSONata message', () => {
    const err = thrown(() => run('$undefinedFunction(1)'));
    expect(err.code).toBe(ErrorCode.EXPRESSION_FAILED);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('Attempted to invoke a non-function');
    expect(thrown(() => run('"a" + 1')).message).toContain('T2001');
  });
});

describe('regular expressions run on RE2', () => {
  const text = (x: string): Scope => ({ ...scope, inputs: { x } });

  it('a catastrophic pattern takes time linear in the text, not exponential', () => {
    const started = performance.now();
    expect(run('$contains(inputs.x, /^(a+)+$/)', text('a'.repeat(100_000) + 'b'))).toBe(false);
    expect(run('$match(inputs.x, /(a|aa)+c/)', text('a'.repeat(50_000)))).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('matches, replaces and splits as JavaScript regexes do, flags and groups included', () => {
    expect(run('$match(inputs.x, /b(c)(d)?/i)', text('😀aBc-x'))).toEqual({
      match: 'Bc',
      index: 3,
      groups: ['c', undefined],
    });
    expect(run('$match(inputs.x, /b(c)/).index', text('abc abc'))).toEqual([1, 5]);
    expect(run('$replace(inputs.x, /(\\w+)@(\\w+)/, "$2 at $1")', text('ada@home, bob@work'))).toBe(
      'home at ada, work at bob',
    );
    expect(run('$split(inputs.x, /,\\s*/)', text('a, b,c'))).toEqual(['a', 'b', 'c']);
    expect(run('$contains(inputs.x, /^b$/m)', text('a\nb'))).toBe(true);
    expect(run('$replace(inputs.x, /(?<y>\\d{4})/, "[$1]")', text('in 2026'))).toBe('in [2026]');
  });

  it('a pattern RE2 cannot run is refused when the expression is read, with its position', () => {
    for (const source of ['$contains(x, /a(?=b)/)', '$match(x, /(a)\\1/)']) {
      const err = thrown(() => compileExpression(source));
      expect(err.code, source).toBe(ErrorCode.INVALID_EXPRESSION);
      expect(err.message).toContain('is not one RE2 runs');
      expect(err.details).toMatchObject({ position: expect.any(Number) });
      expect(err.hint).toContain('look-around');
    }
  });

  it('an expression compiled elsewhere does not bring back the backtracking engine', async () => {
    const catastrophic = compileExpression('$contains(inputs.x, /^(x+)+$/)');
    const { default: jsonata } = await import('jsonata');
    jsonata('$contains("a", /a/)'); // JSONata keeps the last compile's engine in a global
    const started = performance.now();
    expect(catastrophic.evaluate(text('x'.repeat(40) + 'y'))).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('runaway expressions', () => {
  it('endless tail recursion is stopped after the time limit', () => {
    const started = performance.now();
    const err = thrown(() => run('($f := function($n){ $f($n + 1) }; $f(0))'));
    expect(err.code).toBe(ErrorCode.EXPRESSION_FAILED);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('used more than 100 ms of CPU time');
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('a huge map over a million numbers is stopped after the time limit', () => {
    const err = thrown(() => run('[1..1000000].($ * 2)'));
    expect(err.code).toBe(ErrorCode.EXPRESSION_FAILED);
    expect(err.message).toContain('used more than 100 ms of CPU time');
  });

  it('a range of more than a million numbers is refused before it is built', () => {
    const started = performance.now();
    const err = thrown(() => run('$count([1..inputs.n])', { ...scope, inputs: { n: 1e7 } }));
    expect(err.code).toBe(ErrorCode.EXPRESSION_FAILED);
    expect(err.message).toContain('would build a range of 10000000 numbers, more than 1000000');
    expect(performance.now() - started).toBeLessThan(100);
    expect(run('$count([1..1000000])')).toBe(1_000_000);
  });

  it('$pad makes no text longer than a tool result may be', () => {
    const err = thrown(() => run('$pad("x", inputs.n)', { ...scope, inputs: { n: 3e8 } }));
    expect(err.code).toBe(ErrorCode.EXPRESSION_FAILED);
    expect(err.message).toContain('would pad text to 300000000 characters');
    expect(run('$pad("x", -3, "#")')).toBe('##x');
  });

  it('deep recursion is stopped at the depth limit', () => {
    // A generous time limit, so that only the depth limit can stop it on a loaded machine.
    const err = thrown(() =>
      compileExpression('($f := function($n){ 1 + $f($n + 1) }; $f(0))').evaluate(scope, {
        timeoutMs: 30_000,
      }),
    );
    expect(err.code).toBe(ErrorCode.EXPRESSION_FAILED);
    expect(err.message).toContain('recursed deeper than 200 levels');
  });

  it('$eval, which would run a value as an expression, is refused when the expression is read', () => {
    const err = thrown(() => compileExpression('$eval(inputs.formula)'));
    expect(err.code).toBe(ErrorCode.INVALID_EXPRESSION);
    expect(err.message).toContain('$eval is not available');
  });

  it('$eval cannot be reached under another name either', () => {
    const err = thrown(() => run('($f := $lookup($, "x"); $g := $f ? $f : $eval; $g("1 + 1"))'));
    expect(err.code).toBe(ErrorCode.INVALID_EXPRESSION);
  });

  it('a value that looks like an expression stays a value', () => {
    const s: Scope = { ...scope, inputs: { formula: '$sum([1, 2])' } };
    expect(run('inputs.formula', s)).toBe('$sum([1, 2])');
  });

  it('honours timeoutMs and maxDepth options', () => {
    const loop = compileExpression('($f := function($n){ $f($n + 1) }; $f(0))');
    expect(thrown(() => loop.evaluate(scope, { timeoutMs: 20 })).message).toContain(
      'used more than 20 ms of CPU time',
    );
    const factorial = compileExpression(
      '($f := function($n){ $n <= 1 ? 1 : $n * $f($n - 1) }; $f(10))',
    );
    expect(factorial.evaluate(scope)).toBe(3628800);
    expect(thrown(() => factorial.evaluate(scope, { maxDepth: 10 })).message).toContain(
      'recursed deeper than 10 levels',
    );
  });

  it('resets the clock at each evaluation, so later evaluations still succeed', () => {
    thrown(() => run('($f := function($n){ $f($n + 1) }; $f(0))'));
    const sum = compileExpression('$sum([1..1000].($ * 2))');
    for (let i = 0; i < 3; i++) expect(sum.evaluate(scope)).toBe(1001000);
  });
});

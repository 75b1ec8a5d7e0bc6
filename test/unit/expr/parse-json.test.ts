import { describe, expect, it } from 'vitest';
import { compileExpression } from '../../../src/expr/expression.js';
import { PARSE_BOUNDS } from '../../../src/expr/parse-json.js';
import type { Scope } from '../../../src/expr/scope.js';

const run = (source: string, data: Record<string, unknown> = {}) =>
  compileExpression(source).evaluate(data as unknown as Scope);

describe('$parse in expressions', () => {
  it('reads the JSON a tool printed, and goes on with it as a value', () => {
    expect(
      run('$parse(result.stdout).items[1].id', {
        result: { stdout: '{"items":[{"id":1},{"id":2}]}\n' },
      }),
    ).toBe(2);
    expect(run('$parse("[1, 2, 3]") ~> $sum()')).toBe(6);
    expect(run('$parse(result.missing)', { result: {} })).toBeUndefined();
  });

  it('fails with INVALID_JSON, naming the expression, for a text that is not JSON', () => {
    expect(() => run('$parse(result.stdout)', { result: { stdout: 'done: 3 files' } })).toThrow(
      expect.objectContaining({
        code: 'INVALID_JSON',
        message: expect.stringMatching(
          /^expression "\$parse\(result.stdout\)" failed: \$parse was given a text that is not JSON .*"done: 3 files"$/,
        ),
      }),
    );
    expect(() => run('$parse(42)')).toThrow(
      expect.objectContaining({
        code: 'INVALID_JSON',
        message: expect.stringContaining('takes a text, not number'),
      }),
    );
  });

  it('reads no more than the input limits: a larger text or a deeper value is refused', () => {
    const big = JSON.stringify('x'.repeat(PARSE_BOUNDS.maxBytes));
    expect(() => run('$parse(result.t)', { result: { t: big } })).toThrow(
      expect.objectContaining({ code: 'INVALID_JSON' }),
    );
    const deep = '['.repeat(PARSE_BOUNDS.maxDepth + 1) + ']'.repeat(PARSE_BOUNDS.maxDepth + 1);
    expect(() => run('$parse(result.t)', { result: { t: deep } })).toThrow(
      expect.objectContaining({
        code: 'INVALID_JSON',
        message: expect.stringContaining('nested deeper'),
      }),
    );
  });

  it('reads a value, never code: an expression in the text stays text', () => {
    expect(run('$parse(result.t)', { result: { t: '"$eval(\'1+1\')"' } })).toBe("$eval('1+1')");
  });
});

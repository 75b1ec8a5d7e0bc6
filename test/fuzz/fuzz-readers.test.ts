/**
 * Fuzzing the readers of untrusted text: the directive parser (with its XML, templates,
 * expressions and conditions), the template and expression compilers, and the inputs validator
 * get generated and mutated input. Whatever they are fed, they either succeed or throw a
 * `DirigentError` with a stable code (located in the file, for the parser), and each call ends in
 * bounded time: never a crash, a hang, a stack overflow or a bare `Error`.
 *
 * `DIRIGENT_FUZZ_RUNS=10000 npx vitest run test/fuzz` runs longer than CI does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDirective } from '../../src/directive/parse-directive.js';
import { validateInputs } from '../../src/engine/validate-inputs.js';
import { DirigentError } from '../../src/errors/index.js';
import { COMPARE_OPS, type Condition } from '../../src/directive/ast.js';
import { evaluateCondition } from '../../src/expr/condition.js';
import { compileExpression } from '../../src/expr/expression.js';
import { compileTemplate } from '../../src/expr/template.js';
import { DIRECTIVES } from '../support/paths.js';

const RUNS = Number(process.env.DIRIGENT_FUZZ_RUNS ?? 150);
/** The most one call may take: far above what any of them needs, far below a hang. */
const BOUND_MS = 2000;

/** The example directives and the golden cases: real text to mutate. */
const CORPUS = [
  ...readdirSync(DIRECTIVES).map((f) => readFileSync(join(DIRECTIVES, f), 'utf8')),
  ...readdirSync(join(import.meta.dirname, '..', 'golden', 'cases'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => readFileSync(join(import.meta.dirname, '..', 'golden', 'cases', f), 'utf8')),
];

/** Characters that matter to the readers: XML, templates, expressions, shell. */
const SYNTAX = [...'<>/&;"\'={}[]()$#`:?|*!-\\\n\t .,0123456789aAxz_'];
const syntaxText = fc.array(fc.constantFrom(...SYNTAX), { maxLength: 40 }).map((cs) => cs.join(''));
const fragment = fc.oneof(
  syntaxText,
  fc.string({ maxLength: 20 }),
  fc.constantFrom(
    '<step name="x">',
    '</step>',
    '<process>',
    '</directive>',
    '<![CDATA[',
    '<!--',
    '&#0;',
    '&#x1F600;',
    '&lt;',
    '{input:',
    '${steps.',
    '<when expr="',
    '<condition path="a" op="regex" value="(',
    '<!DOCTYPE x>',
    '<a>'.repeat(70),
  ),
);

/** A mutation: replace `[at, at+len)` of the text by `insert`. */
const mutation = fc.record({ at: fc.nat(), len: fc.nat({ max: 30 }), insert: fragment });

function mutate(text: string, mutations: { at: number; len: number; insert: string }[]): string {
  let out = text;
  for (const m of mutations) {
    const at = m.at % (out.length + 1);
    out = out.slice(0, at) + m.insert + out.slice(at + m.len);
  }
  return out;
}

/** Calls `fn`, asserting it succeeds or throws a coded DirigentError, within {@link BOUND_MS}. */
function outcome<T>(fn: () => T): { value?: T; error?: DirigentError } {
  const started = performance.now();
  try {
    return { value: fn() };
  } catch (err) {
    if (!(err instanceof DirigentError)) throw err;
    expect(err.code).toMatch(/^[A-Z_]+$/);
    return { error: err };
  } finally {
    expect(performance.now() - started).toBeLessThan(BOUND_MS);
  }
}

describe('fuzzing the readers', () => {
  it('parseDirective: every mutated directive parses or fails with a located DirigentError', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CORPUS),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        (text, mutations) => {
          const { error } = outcome(() => parseDirective(mutate(text, mutations), 'fuzz.md'));
          if (error) {
            expect(error.location, `${error.code}: ${error.message}`).toMatchObject({
              file: 'fuzz.md',
              line: expect.any(Number),
            });
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('compileTemplate and evaluate: any text compiles or fails with a coded DirigentError', () => {
    const scope = { inputs: { x: 'v', n: [1, 2] }, state: {}, steps: {}, env: {} };
    fc.assert(
      fc.property(fc.oneof(syntaxText, fc.string({ maxLength: 60 })), (text) => {
        const { value } = outcome(() => compileTemplate(text));
        if (value) outcome(() => value.evaluate(scope));
      }),
      { numRuns: RUNS * 4 },
    );
  });

  it('compileExpression and evaluate: any text compiles or fails with a coded DirigentError', () => {
    const scope = { inputs: { x: 'v', n: [1, 2] }, state: { i: 3 }, steps: {} };
    fc.assert(
      fc.property(fc.oneof(syntaxText, fc.string({ maxLength: 60 })), (text) => {
        const { value } = outcome(() => compileExpression(text));
        if (value) outcome(() => value.evaluate(scope));
      }),
      { numRuns: RUNS * 4 },
    );
  });

  it('evaluateCondition: any condition over any values holds, fails or throws a coded DirigentError', () => {
    const compare = fc.record({
      kind: fc.constant('compare' as const),
      path: fc.constantFrom(
        'inputs.x',
        'inputs.n',
        'inputs.n.0',
        'state.s',
        'steps.a.result',
        'nope',
        '',
      ),
      op: fc.constantFrom(...COMPARE_OPS),
      value: fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        syntaxText,
        fc.constantFrom('(a+)+$', '${inputs.x}', '['),
      ),
    });
    const condition: fc.Arbitrary<Condition> = fc.letrec<{ c: Condition }>((tie) => ({
      c: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        compare,
        fc.record({
          kind: fc.constantFrom('any' as const, 'all' as const),
          of: fc.array(tie('c'), { maxLength: 3 }),
        }),
        fc.record({ kind: fc.constant('not' as const), of: tie('c') }),
      ),
    })).c;
    fc.assert(
      fc.property(
        condition,
        fc.jsonValue({ maxDepth: 3 }),
        fc.string({ maxLength: 2000 }),
        (cond, x, s) => {
          const scope = { inputs: { x, n: [s, 1] }, state: { s: 'a'.repeat(30) + s }, steps: {} };
          const { value } = outcome(() => evaluateCondition(cond, scope));
          if (value !== undefined) expect(typeof value).toBe('boolean');
        },
      ),
      { numRuns: RUNS * 4 },
    );
  });

  it('validateInputs: any JSON for typed inputs is accepted, coerced or refused with INVALID_INPUTS', () => {
    const d = parseDirective(
      '# T\n\n```xml\n<directive name="fuzz" version="1.0.0"><inputs>' +
        '<input name="s" type="string">s</input><input name="i" type="integer" required="false">i</input>' +
        '<input name="b" type="boolean" default="false">b</input><input name="a" type="array" required="false">a</input>' +
        '<input name="o" type="object" required="false">o</input>' +
        '</inputs><process><step name="x"><render>hi</render></step></process></directive>\n```\n',
      'fuzz.md',
    );
    const key = fc.constantFrom('s', 'i', 'b', 'a', 'o', 'zz', '__proto__', 'constructor');
    fc.assert(
      fc.property(fc.dictionary(key, fc.jsonValue({ maxDepth: 4 })), (inputs) => {
        const { value, error } = outcome(() => validateInputs(d, inputs));
        if (error) expect(['INVALID_INPUTS', 'INPUT_TOO_LARGE']).toContain(error.code);
        else expect(typeof value).toBe('object');
      }),
      { numRuns: RUNS * 4 },
    );
  });
});

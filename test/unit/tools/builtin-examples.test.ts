/**
 * Every built-in tool carries worked examples, and each one holds: run through the dispatcher in
 * a fresh project, the result (or the error) is the one the example shows. `dirigent tool test
 * --all` runs the same examples from the command line (test/e2e/tool-test.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { BuiltinDispatcher } from '../../../src/tools/builtin-dispatcher.js';
import { BUILTIN_TOOLS } from '../../../src/tools/builtin/index.js';
import { runToolExample } from '../../../src/tools/run-tool-example.js';

const dispatcher = new BuiltinDispatcher();

describe('the examples of the built-in tools', () => {
  it('every built-in has at least one example', () => {
    expect(
      BUILTIN_TOOLS.filter((t) => (t.examples ?? []).length === 0).map((t) => t.itemId),
    ).toEqual([]);
  });

  for (const tool of BUILTIN_TOOLS) {
    (tool.examples ?? []).forEach((example, i) => {
      it(`${tool.itemId}: ${example.description}`, async () => {
        const outcome = await runToolExample(
          dispatcher,
          tool.itemId,
          example,
          i,
          new AbortController().signal,
        );
        expect(outcome.difference).toBeUndefined();
        expect(outcome.passed).toBe(true);
      });
    });
  }
});

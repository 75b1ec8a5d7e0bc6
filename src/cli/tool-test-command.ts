import { resolve } from 'node:path';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { ItemResolver } from '../items/item-resolver.js';
import { defaultSpaces } from '../items/space.js';
import { ItemDispatcher } from '../tools/item-dispatcher.js';
import { runToolExample, type ExampleOutcome } from '../tools/run-tool-example.js';
import { allToolExamples, toolExamples, type ToolExamples } from '../tools/tool-examples.js';
import { INVALID_CALL, reportToolError } from './tool-command.js';
import { cancelled } from '../errors/stop-errors.js';

/**
 * `dirigent tool test <item_id>` or `--all`: runs the worked examples of one tool, or of every
 * tool that has some (the built-ins, RYE's names of them, the project's JS/TS tools), each in a
 * fresh project folder, and prints each one's pass or the difference. Exit status: 0 when every
 * example passed, 1 when one failed, 2 when the call is wrong (no such tool, no examples).
 */
export async function toolTestCommand(
  itemId: string | undefined,
  opts: { all?: boolean; project: string; json?: boolean },
): Promise<number> {
  const projectDir = resolve(opts.project);
  const items = new ItemResolver(defaultSpaces(projectDir));
  const dispatcher = new ItemDispatcher(items);
  const controller = new AbortController();
  const onSigint = () =>
    controller.abort(cancelled('The call', 'interrupted from the terminal (SIGINT)'));
  process.once('SIGINT', onSigint);
  try {
    if ((itemId === undefined) === (opts.all !== true)) {
      throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, 'Name one tool, or give --all.', {
        hint: 'dirigent tool test dirigent/fs/read, or dirigent tool test --all.',
      });
    }
    const tools =
      itemId === undefined
        ? await allToolExamples(dispatcher, items, projectDir)
        : [await toolExamples(dispatcher, itemId, projectDir)];
    const outcomes: ExampleOutcome[] = [];
    for (const tool of tools) {
      if (!opts.json) process.stdout.write(`${tool.itemId} (${tool.from})\n`);
      for (const [i, example] of tool.examples.entries()) {
        const outcome = await runToolExample(
          dispatcher,
          tool.itemId,
          example,
          i,
          controller.signal,
        );
        outcomes.push(outcome);
        if (!opts.json) process.stdout.write(`${line(outcome)}\n`);
      }
    }
    const failed = outcomes.filter((o) => !o.passed).length;
    if (opts.json) {
      process.stdout.write(
        `${JSON.stringify({ ok: failed === 0, tools: tools.map(summary), outcomes })}\n`,
      );
    } else {
      process.stdout.write(
        `${outcomes.length} examples of ${tools.length} tools: ${outcomes.length - failed} passed, ${failed} failed\n`,
      );
    }
    return failed === 0 ? 0 : 1;
  } catch (err) {
    const e = reportToolError(err, opts);
    return INVALID_CALL.includes(e.code) ||
      e.code === ErrorCode.NO_EXAMPLES ||
      e.code === ErrorCode.INVALID_REQUEST
      ? 2
      : 1;
  } finally {
    process.off('SIGINT', onSigint);
    await dispatcher.close();
    items.close();
  }
}

function line(o: ExampleOutcome): string {
  const ms = `${Math.round(o.durationMs)} ms`;
  return o.passed
    ? `  ✓ ${o.description} (${ms})`
    : `  ✗ ${o.description} (${ms})\n      ${o.difference}`;
}

function summary(t: ToolExamples) {
  return { itemId: t.itemId, from: t.from, examples: t.examples.length };
}

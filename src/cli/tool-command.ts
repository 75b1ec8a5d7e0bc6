import { resolve } from 'node:path';
import { formatDiagnostic } from '../directive/diagnostics.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { ItemResolver } from '../items/item-resolver.js';
import { defaultSpaces } from '../items/space.js';
import { ItemDispatcher } from '../tools/item-dispatcher.js';
import { parseJsonOption } from './parse-inputs.js';
import { diagnosticsOf } from './validate-command.js';

/** Errors that mean the call itself is wrong (exit 2), not that the tool failed (exit 1). */
const INVALID_CALL: string[] = [
  ErrorCode.INVALID_TOOL,
  ErrorCode.UNKNOWN_TOOL,
  ErrorCode.INVALID_PARAMS,
  ErrorCode.INVALID_ITEM_ID,
  ErrorCode.INVALID_INPUTS,
];

/**
 * `dirigent tool run <item_id> --params <json>`: runs one tool directly and prints its result.
 * Exit status: 0 success, 1 the tool failed, 2 the call is invalid (unknown tool, bad params).
 */
export async function toolRunCommand(
  itemId: string,
  opts: { params?: string; project: string; json?: boolean },
): Promise<number> {
  const controller = new AbortController();
  const onSigint = () =>
    controller.abort(
      DirigentError.fatal(ErrorCode.CANCELLED, 'Cancelled from the terminal (SIGINT).'),
    );
  process.once('SIGINT', onSigint);
  try {
    const params = parseJsonOption(opts.params, '--params') ?? {};
    const dispatcher = new ItemDispatcher(new ItemResolver(defaultSpaces(resolve(opts.project))));
    const result = await dispatcher.dispatch({
      itemId,
      params,
      projectDir: resolve(opts.project),
      runId: 'cli',
      step: 'tool',
      attempt: 1,
      signal: controller.signal,
    });
    process.stdout.write(
      `${JSON.stringify(opts.json ? { ok: true, result } : result, null, opts.json ? undefined : 2)}\n`,
    );
    return 0;
  } catch (err) {
    const e = DirigentError.from(err);
    if (opts.json) process.stdout.write(`${JSON.stringify({ ok: false, error: e.toJSON() })}\n`);
    else for (const d of diagnosticsOf(e)) process.stderr.write(`${formatDiagnostic(d)}\n`);
    return INVALID_CALL.includes(e.code) ? 2 : 1;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

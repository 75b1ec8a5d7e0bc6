/**
 * `$parse(text)` in expressions: the value of a JSON text (what a tool printed, say), bounded as
 * inputs are (by default 1 MiB and 64 levels: the input limits' defaults). A text that is not JSON,
 * or too large or deep, fails the expression with `INVALID_JSON`, which fails its step (located at
 * the step): it never reads the text as anything but data.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { checkJsonSize, type JsonBounds } from '../policy/check-json-size.js';
import { DEFAULT_LIMITS } from '../policy/input-limits.js';

/** How much `$parse` reads at most. */
export const PARSE_BOUNDS: JsonBounds = {
  maxBytes: DEFAULT_LIMITS.inputsBytes,
  maxDepth: DEFAULT_LIMITS.jsonDepth,
};

/** `$parse(text)`: see the module comment. `undefined` (a path to nothing) stays undefined. */
export function parseJson(text: unknown): unknown {
  if (text === undefined) return undefined;
  if (typeof text !== 'string')
    throw invalidJson(`$parse takes a text, not ${text === null ? 'null' : typeof text}`);
  if (Buffer.byteLength(text) > PARSE_BOUNDS.maxBytes)
    throw invalidJson(
      `$parse was given ${Buffer.byteLength(text)} bytes, more than ${PARSE_BOUNDS.maxBytes}`,
      'Leave large data to a file a tool reads, or read the part you need with a tool.',
    );
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    throw invalidJson(
      `$parse was given a text that is not JSON (${(err as Error).message}): ${preview(text)}`,
    );
  }
  checkJsonSize(value, PARSE_BOUNDS, {
    what: 'The JSON $parse read',
    code: ErrorCode.INVALID_JSON,
    setting: 'limits.json_depth',
  });
  return value;
}

function invalidJson(message: string, hint?: string): DirigentError {
  return DirigentError.fatal(ErrorCode.INVALID_JSON, message, {
    hint:
      hint ??
      'Check what the tool printed (its result in the run record); $parse reads one JSON value, such as {"a": 1} or [1, 2].',
  });
}

/** The start of a text, for a message. */
function preview(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(one.length > 60 ? `${one.slice(0, 60)}…` : one);
}

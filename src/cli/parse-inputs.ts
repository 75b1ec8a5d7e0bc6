import { readFileSync } from 'node:fs';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/** `--input name=value` (repeatable) and `--inputs <json | @file>`, merged; `--input` wins. */
export function parseInputs(pairs: string[], json: string | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (json !== undefined) {
    const text = json.startsWith('@') ? readInputsFile(json.slice(1)) : json;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw DirigentError.fatal(
        ErrorCode.INVALID_INPUTS,
        `--inputs is not valid JSON: ${(err as Error).message}`,
        { hint: `Example: --inputs '{"name": "Ada"}' or --inputs @inputs.json.` },
      );
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw DirigentError.fatal(
        ErrorCode.INVALID_INPUTS,
        '--inputs must be a JSON object of input names to values.',
      );
    }
    Object.assign(out, parsed);
  }
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw DirigentError.fatal(ErrorCode.INVALID_INPUTS, `--input "${pair}" is not name=value.`, {
        hint: 'Example: --input name=Ada.',
      });
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

function readInputsFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw DirigentError.fatal(
      ErrorCode.FILE_NOT_FOUND,
      `Cannot read --inputs file ${path}: ${(err as Error).message}`,
    );
  }
}

/** `--payload` of a signal: JSON when it parses, else the plain string. */
export function parsePayload(text: string | undefined): unknown {
  if (text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

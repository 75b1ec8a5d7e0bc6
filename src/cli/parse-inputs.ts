import { readFileSync } from 'node:fs';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { cannotRead } from '../errors/file-errors.js';

/**
 * A JSON-object option given inline or as `@file` (`--inputs`, `--params`); undefined when absent.
 * Errors name the option and show an example.
 */
export function parseJsonOption(
  value: string | undefined,
  option: string,
): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  const text = value.startsWith('@') ? readInputsFile(value.slice(1)) : value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_INPUTS,
      `${option} is not valid JSON: ${(err as Error).message}`,
      {
        hint: `Example: ${option} '{"name": "Ada"}' or ${option} @file.json.`,
      },
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_INPUTS,
      `${option} must be a JSON object of names to values.`,
    );
  }
  return parsed as Record<string, unknown>;
}

/** `--input name=value` (repeatable) and `--inputs <json | @file>`, merged; `--input` wins. */
export function parseInputs(pairs: string[], json: string | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  Object.assign(out, parseJsonOption(json, '--inputs'));
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
    throw cannotRead(path, err);
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

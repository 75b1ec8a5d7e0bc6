/**
 * Bounds on data that comes in (inputs, signal payloads, tool results): its size as JSON and how
 * deep it nests, measured without recursion and without building the JSON text, stopping as soon
 * as a bound is passed.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/** What {@link checkJsonSize} enforces. */
export interface JsonBounds {
  maxBytes: number;
  maxDepth: number;
}

/** Where an oversized value came from, for the message and the hint. */
export interface JsonSubject {
  /** What the value is, to begin the message: `The inputs`, `The payload of signal "approve"`. */
  what: string;
  /** The error code: `INPUT_TOO_LARGE` for what callers send, `RESULT_TOO_LARGE` for results. */
  code: ErrorCode;
  /** The setting that raises the limit (`limits.inputs_bytes`). */
  setting: string;
}

/**
 * Throws `subject.code` when `value`, written as JSON, would be larger than `maxBytes` (UTF-8) or
 * nest deeper than `maxDepth`. Values JSON cannot write (functions, undefined) count as nothing.
 */
export function checkJsonSize(value: unknown, bounds: JsonBounds, subject: JsonSubject): void {
  let bytes = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v === 'string') bytes += byteLength(v) + 2;
    else if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint')
      bytes += String(v).length;
    else if (v === null) bytes += 4;
    else if (typeof v === 'object') {
      if (depth >= bounds.maxDepth) throw tooDeep(subject, bounds.maxDepth);
      if (Array.isArray(v)) {
        bytes += 2 + v.length;
        for (const item of v) stack.push([item, depth + 1]);
      } else {
        bytes += 2;
        for (const [key, item] of Object.entries(v)) {
          bytes += byteLength(key) + 4;
          stack.push([item, depth + 1]);
        }
      }
    }
    if (bytes > bounds.maxBytes) throw tooLarge(subject, bounds.maxBytes);
  }
}

const byteLength = (s: string): number => Buffer.byteLength(s);

function tooLarge(subject: JsonSubject, max: number): DirigentError {
  return DirigentError.fatal(
    subject.code,
    `${subject.what}: larger than ${max} bytes as JSON, the limit.`,
    {
      hint: `Pass large data as a file (its path as the value), or raise ${subject.setting} in .ai/config/dirigent.yaml.`,
      details: { limit: max },
    },
  );
}

function tooDeep(subject: JsonSubject, max: number): DirigentError {
  return DirigentError.fatal(
    subject.code,
    `${subject.what}: nested deeper than ${max} levels, the limit.`,
    {
      hint: 'Flatten the data, or raise limits.json_depth in .ai/config/dirigent.yaml.',
      details: { limit: max },
    },
  );
}

/** Throws `INPUT_TOO_LARGE` for a signal payload beyond `limits` (see {@link checkJsonSize}). */
export function checkSignalPayload(
  name: string,
  payload: unknown,
  limits: { payloadBytes: number; jsonDepth: number },
): void {
  checkJsonSize(
    payload,
    { maxBytes: limits.payloadBytes, maxDepth: limits.jsonDepth },
    {
      what: `The payload of signal "${name}"`,
      code: ErrorCode.INPUT_TOO_LARGE,
      setting: 'limits.payload_bytes',
    },
  );
}

/**
 * The size limits on what comes in (a directive file, inputs, payloads, results, text `$parse`
 * reads), and their defaults; a project sets its own in `.ai/config/dirigent.yaml` (`limits:`).
 */

/** Size limits on what comes in, in bytes (nesting depth in levels). */
export interface InputLimits {
  /** A directive file. */
  directiveBytes: number;
  /** A run's inputs, as JSON. */
  inputsBytes: number;
  /** A signal's payload, as JSON. */
  payloadBytes: number;
  /** A tool's result, as JSON. */
  resultBytes: number;
  /** How deep inputs, payloads and results may nest. */
  jsonDepth: number;
}

const MIB = 1024 * 1024;

/** The limits when the project sets none. */
export const DEFAULT_LIMITS: InputLimits = Object.freeze({
  directiveBytes: MIB,
  inputsBytes: MIB,
  payloadBytes: MIB,
  resultBytes: 8 * MIB,
  jsonDepth: 64,
});

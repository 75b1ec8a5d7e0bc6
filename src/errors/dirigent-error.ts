import { ErrorCode, isErrorCode } from './error-codes.js';
import { formatLocation, type SourceLocation } from './source-location.js';

/** Options of a {@link DirigentError} beyond its code and message. */
export interface DirigentErrorOptions {
  /** Where in a file the problem is. */
  location?: SourceLocation;
  /** How to fix it, one sentence. */
  hint?: string;
  /** Whether trying the same work again may succeed. Default: false (fatal). */
  retryable?: boolean;
  /** Machine-readable extra facts (never secrets). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** The plain-data form of an error, as stored in run records and sent between processes. */
export interface SerializedError {
  /**
   * One of the {@link ErrorCode}s, typed as a string on purpose: this form crosses processes
   * (BullMQ jobs, the HTTP API) and lives on in stored run records, so it may come from a newer
   * version of Dirigent with a code this process does not know. {@link DirigentError.fromJSON}
   * decides what such a code becomes here.
   */
  code: string;
  message: string;
  retryable: boolean;
  hint?: string;
  location?: SourceLocation;
  details?: Record<string, unknown>;
}

/**
 * The key of `details` under which {@link DirigentError.fromJSON} keeps a code this version does
 * not know, so that {@link DirigentError.toJSON} gives it back unchanged.
 */
export const ORIGINAL_CODE_DETAIL = 'originalCode';

/**
 * The one error type Dirigent throws. It has a stable {@link ErrorCode}, a message that says what
 * went wrong and where, an optional hint that says how to fix it, and a `retryable` flag that the
 * retry policy reads. It survives serialisation through {@link DirigentError.toJSON} and
 * {@link DirigentError.fromJSON}.
 */
export class DirigentError extends Error {
  override readonly name = 'DirigentError';
  readonly code: ErrorCode;
  readonly location: SourceLocation | undefined;
  readonly hint: string | undefined;
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: DirigentErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.location = options.location;
    this.hint = options.hint;
    this.retryable = options.retryable ?? false;
    this.details = options.details;
  }

  /** A failure that may succeed when tried again (network, non-zero exit, timeout). */
  static retryable(code: ErrorCode, message: string, options: DirigentErrorOptions = {}) {
    return new DirigentError(code, message, { ...options, retryable: true });
  }

  /** A failure that will fail again whatever the number of tries. */
  static fatal(code: ErrorCode, message: string, options: DirigentErrorOptions = {}) {
    return new DirigentError(code, message, { ...options, retryable: false });
  }

  /**
   * The code as the error was sent: {@link code}, or the code of a newer version that
   * {@link fromJSON} did not know and kept in `details` while {@link code} says `INTERNAL`.
   */
  get sentCode(): string {
    const original = this.details?.[ORIGINAL_CODE_DETAIL];
    return this.code === ErrorCode.INTERNAL && typeof original === 'string' ? original : this.code;
  }

  /** `file:line:col: message (hint)`: the form printed to a person. */
  describe(): string {
    const where = this.location ? `${formatLocation(this.location)}: ` : '';
    const hint = this.hint ? `\n  hint: ${this.hint}` : '';
    return `${where}${this.message} [${this.sentCode}]${hint}`;
  }

  /** The plain-data form; an unknown code kept by {@link fromJSON} goes out as it came in. */
  toJSON(): SerializedError {
    const out: SerializedError = {
      code: this.sentCode,
      message: this.message,
      retryable: this.retryable,
    };
    if (this.hint !== undefined) out.hint = this.hint;
    if (this.location !== undefined) out.location = this.location;
    if (this.details !== undefined) out.details = this.details;
    return out;
  }

  /**
   * Rebuilds an error from its serialised form (the inverse of {@link DirigentError.toJSON}).
   *
   * A code this version does not know (the error came from a newer worker, or from a run record
   * written by one) becomes `INTERNAL` here, so that every switch on {@link code} stays
   * exhaustive, while the message, hint, retryable flag and details stay as sent, and the code
   * itself is kept in `details.originalCode`: {@link describe} prints it and {@link toJSON}
   * sends it on unchanged.
   */
  static fromJSON(data: SerializedError): DirigentError {
    const code = isErrorCode(data.code) ? data.code : ErrorCode.INTERNAL;
    const details =
      code === data.code ? data.details : { ...data.details, [ORIGINAL_CODE_DETAIL]: data.code };
    return new DirigentError(code, data.message, {
      retryable: data.retryable,
      ...(data.hint !== undefined && { hint: data.hint }),
      ...(data.location !== undefined && { location: data.location }),
      ...(details !== undefined && { details }),
    });
  }

  /** Wraps anything thrown into a DirigentError; unknown errors are fatal `INTERNAL` ones. */
  static from(err: unknown, code: ErrorCode = ErrorCode.INTERNAL): DirigentError {
    if (err instanceof DirigentError) return err;
    const message = err instanceof Error ? err.message : String(err);
    return new DirigentError(code, message, { cause: err });
  }
}

/**
 * Whether `err` is a {@link DirigentError}, and when `code` is given, one with that code: the
 * typed way to ask what an error is (never compare `(err as { code?: string }).code`).
 */
export function isDirigentError(err: unknown, code?: ErrorCode): err is DirigentError {
  return err instanceof DirigentError && (code === undefined || err.code === code);
}

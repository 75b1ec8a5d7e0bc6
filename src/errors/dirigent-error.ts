import { ErrorCode } from './error-codes.js';
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
  code: string;
  message: string;
  retryable: boolean;
  hint?: string;
  location?: SourceLocation;
  details?: Record<string, unknown>;
}

/**
 * The one error type Dirigent throws. It has a stable {@link ErrorCode}, a message that says what
 * went wrong and where, an optional hint that says how to fix it, and a `retryable` flag that the
 * retry policy reads. It survives serialisation through {@link DirigentError.toJSON} and
 * {@link DirigentError.fromJSON}.
 */
export class DirigentError extends Error {
  override readonly name = 'DirigentError';
  readonly code: ErrorCode | string;
  readonly location: SourceLocation | undefined;
  readonly hint: string | undefined;
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode | string, message: string, options: DirigentErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.location = options.location;
    this.hint = options.hint;
    this.retryable = options.retryable ?? false;
    this.details = options.details;
  }

  /** A failure that may succeed when tried again (network, non-zero exit, timeout). */
  static retryable(code: ErrorCode | string, message: string, options: DirigentErrorOptions = {}) {
    return new DirigentError(code, message, { ...options, retryable: true });
  }

  /** A failure that will fail again whatever the number of tries. */
  static fatal(code: ErrorCode | string, message: string, options: DirigentErrorOptions = {}) {
    return new DirigentError(code, message, { ...options, retryable: false });
  }

  /** `file:line:col: message (hint)`: the form printed to a person. */
  describe(): string {
    const where = this.location ? `${formatLocation(this.location)}: ` : '';
    const hint = this.hint ? `\n  hint: ${this.hint}` : '';
    return `${where}${this.message} [${this.code}]${hint}`;
  }

  toJSON(): SerializedError {
    const out: SerializedError = {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
    };
    if (this.hint !== undefined) out.hint = this.hint;
    if (this.location !== undefined) out.location = this.location;
    if (this.details !== undefined) out.details = this.details;
    return out;
  }

  /** Rebuilds an error from its serialised form (the inverse of {@link DirigentError.toJSON}). */
  static fromJSON(data: SerializedError): DirigentError {
    return new DirigentError(data.code, data.message, {
      retryable: data.retryable,
      ...(data.hint !== undefined && { hint: data.hint }),
      ...(data.location !== undefined && { location: data.location }),
      ...(data.details !== undefined && { details: data.details }),
    });
  }

  /** Wraps anything thrown into a DirigentError; unknown errors are fatal `INTERNAL` ones. */
  static from(err: unknown, code: ErrorCode | string = ErrorCode.INTERNAL): DirigentError {
    if (err instanceof DirigentError) return err;
    const message = err instanceof Error ? err.message : String(err);
    return new DirigentError(code, message, { cause: err });
  }
}

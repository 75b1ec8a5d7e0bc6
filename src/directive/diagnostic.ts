/** What reading a directive reports besides the directive: its warnings and errors. */
import type { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';

/** A warning or error found while reading a directive. */
export interface Diagnostic {
  severity: 'error' | 'warning';
  /**
   * An {@link ErrorCode} for an error; a warning may have a code of its own that no error has
   * (`LENIENT_XML`, `GRAPH_KEY`).
   */
  code: string;
  message: string;
  loc: SourceLocation | undefined;
  hint: string | undefined;
}

/** An error diagnostic: its code is one of the {@link ErrorCode}s, since it may become an error. */
export interface ErrorDiagnostic extends Diagnostic {
  severity: 'error';
  code: ErrorCode;
}

/** What reading a directive reports besides the directive: its warnings and errors. */
import type { SourceLocation } from '../errors/source-location.js';

/** A warning or error found while reading a directive. */
export interface Diagnostic {
  severity: 'error' | 'warning';
  code: string;
  message: string;
  loc: SourceLocation | undefined;
  hint: string | undefined;
}

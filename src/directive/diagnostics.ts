import { DirigentError } from '../errors/dirigent-error.js';
import type { ErrorCode } from '../errors/error-codes.js';
import { formatLocation, type SourceLocation } from '../errors/source-location.js';
import type { Diagnostic, ErrorDiagnostic } from './diagnostic.js';

/**
 * Collects the errors and warnings found while reading one directive. A collector made by
 * {@link asWarnings} keeps nothing itself: it passes what it is told to another collector, with
 * errors demoted to warnings.
 */
export class Diagnostics {
  readonly errors: ErrorDiagnostic[] = [];
  readonly warnings: Diagnostic[] = [];

  /** @param demoteTo - when set, where errors go as warnings, each message followed by `note`. */
  constructor(private readonly demoteTo?: { target: Diagnostics; note: string }) {}

  error(code: ErrorCode, message: string, loc: SourceLocation | undefined, hint?: string): void {
    if (this.demoteTo !== undefined) {
      const { target, note } = this.demoteTo;
      const joined =
        note === '' ? message : `${message}${/[.?!)]$/.test(message) ? ' ' : '. '}${note}`;
      target.warn(code, joined, loc, hint);
      return;
    }
    this.errors.push({ severity: 'error', code, message, loc, hint });
  }

  warn(code: string, message: string, loc: SourceLocation | undefined, hint?: string): void {
    if (this.demoteTo !== undefined) this.demoteTo.target.warn(code, message, loc, hint);
    else this.warnings.push({ severity: 'warning', code, message, loc, hint });
  }

  /** Records a thrown DirigentError as an error diagnostic; rethrows anything else. */
  capture(err: unknown): void {
    if (!(err instanceof DirigentError)) throw err;
    this.error(err.code, err.message, err.location, err.hint);
  }

  /**
   * Throws one error carrying every diagnostic when any error was recorded. They are listed in
   * file order (line, then column; errors without a place last), and the first one gives the
   * error its code, message and location.
   */
  throwIfErrors(): void {
    this.errors.splice(0, this.errors.length, ...inFileOrder(this.errors));
    const first = this.errors[0];
    if (first === undefined) return;
    const more = this.errors.length > 1 ? ` (and ${this.errors.length - 1} more)` : '';
    throw DirigentError.fatal(first.code, first.message + more, {
      ...(first.loc && { location: first.loc }),
      ...(first.hint && { hint: first.hint }),
      details: { diagnostics: this.errors },
    });
  }
}

/**
 * A {@link Diagnostics} whose errors are recorded in `target` as warnings, each message followed
 * by `note` (a sentence: what happens instead of a failure): for what is checked but not
 * executed, such as RYE's prose.
 */
export function asWarnings(target: Diagnostics, note = ''): Diagnostics {
  return new Diagnostics({ target, note });
}

/** `file:line:col: message [CODE]` followed by the hint, as printed by the CLI. */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.loc ? `${formatLocation(d.loc)}: ` : '';
  const hint = d.hint ? `\n  hint: ${d.hint}` : '';
  return `${where}${d.severity}: ${d.message} [${d.code}]${hint}`;
}

/** Diagnostics of a failed load: every one the parser collected, or the single error. */
export function diagnosticsOf(err: DirigentError): Diagnostic[] {
  const list = err.details?.diagnostics as Diagnostic[] | undefined;
  return (
    list ?? [
      {
        severity: 'error',
        code: err.code,
        message: err.message,
        loc: err.location,
        hint: err.hint,
      },
    ]
  );
}

/** `list` by line and column (those without a place last): the order errors are told in. */
export function inFileOrder<T extends Diagnostic>(list: readonly T[]): T[] {
  const at = (d: Diagnostic) =>
    d.loc === undefined ? [Infinity, Infinity] : [d.loc.line, d.loc.column];
  return [...list].sort((a, b) => {
    const [la, ca] = at(a);
    const [lb, cb] = at(b);
    return la! - lb! || ca! - cb!;
  });
}

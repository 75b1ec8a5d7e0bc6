import type { Diagnostic } from '../directive/ast.js';
import { diagnosticsOf, inFileOrder } from '../directive/diagnostics.js';
import { partialDirectiveOf } from '../directive/parse-directive.js';
import type { DirectiveLoader, LoadedDirective } from '../engine/directive-loader.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { infoOf, type DirectiveInfo } from './directive-catalog.js';

/** What {@link Dirigent.validate} finds. */
export interface Validation {
  valid: boolean;
  /** What makes the directive fail before or while it runs: a run of it is refused. */
  errors: Diagnostic[];
  /**
   * What is worth knowing and does not stop it: RYE's prose and documentary elements, executions
   * `<permissions>` do not grant, values that would become code, a tool of RYE's that is missing.
   */
  warnings: Diagnostic[];
  /** What the directive offers, when it is valid. */
  directive?: DirectiveInfo;
}

/** How strictly a directive is validated. */
export interface ValidateOptions {
  /** Warnings count as errors (for CI): any makes the directive invalid. Default false. */
  strict?: boolean;
}

/** What a directive is validated with: the project's loader, and how it loads directives by item id. */
export interface ValidateTarget {
  readonly loader: Pick<DirectiveLoader, 'fromText' | 'fileOf' | 'projectFindings'>;
  load(directive: string): Promise<LoadedDirective>;
}

/**
 * Checks a directive without running it: one of the project's by item id, or a text (read as the
 * content of a directive file, under the project's policy). The checks are those a start makes:
 * its text (`directive/validate-directive.ts`) and its tools, child directives and parameters
 * against the project (`DirectiveLoader.projectFindings`). Never throws for the directive's own
 * problems: they are the answer; `UNKNOWN_DIRECTIVE` for an item id the project does not hold.
 */
export async function validateDirective(
  target: ValidateTarget,
  request: ({ directive: string } | { source: string }) & ValidateOptions,
): Promise<Validation> {
  return validateLoaded(
    target.loader,
    () =>
      'source' in request
        ? target.loader.fromText(target.loader.fileOf('_request', '.md'), request.source)
        : target.load(request.directive),
    { ...(request.strict !== undefined && { strict: request.strict }) },
    // A directive the project does not hold is the request's problem, not a finding.
    (e) => 'directive' in request && e.code === ErrorCode.UNKNOWN_DIRECTIVE,
  );
}

/**
 * Validates the directive `load` gives (see {@link validateDirective}); an error of loading it
 * that `rethrow` picks is thrown rather than reported.
 */
export async function validateLoaded(
  loader: Pick<DirectiveLoader, 'projectFindings'>,
  load: () => LoadedDirective | Promise<LoadedDirective>,
  options: ValidateOptions = {},
  rethrow: (e: DirigentError) => boolean = () => false,
): Promise<Validation> {
  let found: Validation;
  try {
    const loaded = await load();
    const d = loaded.compiled.directive;
    const findings = await loader.projectFindings(d, loaded.file);
    const info = infoOf(loaded, 'project');
    const warnings = [...info.warnings, ...findings.warnings];
    found =
      findings.errors.length > 0
        ? { valid: false, errors: inFileOrder(findings.errors), warnings }
        : { valid: true, errors: [], warnings, directive: { ...info, warnings } };
  } catch (err) {
    const e = DirigentError.from(err);
    if (rethrow(e)) throw e;
    found = { valid: false, errors: diagnosticsOf(e), warnings: [] };
    // A directive read whole but wrong is checked against the project too: one answer tells
    // everything, rather than a second run of validate after the first is mended.
    const partial = partialDirectiveOf(err);
    // What cannot be checked of a directive whose text is wrong is told once the text is mended.
    const findings =
      partial === undefined
        ? undefined
        : await loader.projectFindings(partial, partial.source.file).catch(() => undefined);
    if (partial !== undefined && findings !== undefined) {
      const placed = new Set(found.errors.map(placeOf));
      const more = findings.errors.filter((f) => !placed.has(placeOf(f)));
      found = {
        valid: false,
        errors: inFileOrder([...found.errors, ...more]),
        warnings: [...partial.warnings, ...findings.warnings],
      };
    }
  }
  if (options.strict !== true || found.warnings.length === 0) return found;
  // The directive is no longer valid, so what it offers is not returned.
  return {
    valid: false,
    errors: [...found.errors, ...found.warnings.map((w) => ({ ...w, severity: 'error' as const }))],
    warnings: [],
  };
}

/** Where a diagnostic stands, as a key: one finding per place. */
function placeOf(d: Diagnostic): string {
  return d.loc === undefined ? d.message : `${d.loc.file}:${d.loc.line}:${d.loc.column}`;
}

/**
 * What a template is once parsed (see `compileTemplate`): its literal texts, its slots, the paths
 * it reads, and how it is evaluated.
 */
import type { Scope } from './scope.js';

/** One path a template reads, for static validation by the compiler. */
export interface TemplateRef {
  /** `inputs`, `state`, `steps`, `result`, `error`, `env`, or a loop variable's name. */
  root: string;
  /** Segments below the root (`["files", "0", "path"]`). */
  path: string[];
  /** True when a miss of this path alone raises nothing (`?`, a default, or a later `||`). */
  optional: boolean;
  /** The template's text, braces included (`${state.files.0.path}`). */
  raw: string;
}

/** One `${…}`, `{input:…}` or `{env:…}` of a template. */
export interface TemplateSlot {
  /** Its text, braces included (`{input:name}`): how messages name it. */
  readonly raw: string;
  /** The variable it reads when it reads one environment variable and nothing else. */
  readonly envName: string | undefined;
}

/** A parsed template. */
export interface CompiledTemplate {
  /** True when the text is exactly one template: its value keeps its type. */
  readonly isWhole: boolean;
  /** Every path the template reads, in order. */
  readonly refs: TemplateRef[];
  /**
   * The literal text around the slots: one more than {@link slots} (`["echo '", "'"]` for
   * `echo '{input:x}'`), `$${` already turned into `${`. A text without templates is one text.
   */
  readonly texts: readonly string[];
  /** The templates in the text, in order. */
  readonly slots: readonly TemplateSlot[];
  /** The value of each slot, as `evaluate` would write it in (throws alike). */
  slotValues(scope: Scope): unknown[];
  /**
   * The value: for a whole template, the value itself (`undefined` for a missing optional one);
   * otherwise the text with each template replaced by `stringifyValue` of its value.
   * Throws `TEMPLATE_PATH_MISSING` (fatal) for a missing path without `?` or default.
   */
  evaluate(scope: Scope): unknown;
}

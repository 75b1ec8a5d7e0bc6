/**
 * Writes values into a shell template as data. Each value is handed to the shell as an
 * environment variable, and its slot is replaced by a reference to that variable written for the
 * quoting around it (see {@link ShellQuoting}): `echo 'Hello, {input:name}!'` runs as
 * `echo 'Hello, '"${DIRIGENT_V0}"'!'` with `DIRIGENT_V0` set to the name. Bash expands a variable
 * once and never parses what it holds, so no value can end the quoting it stands in or start a
 * command. Where bash, or a program it starts, would still read the value as more than data
 * (`shell-analysis.ts`: arithmetic, names, text read again, another language's program text,
 * options), the value must have the shape its slot needs or the command does not run. Pure.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { stringifyValue } from '../expr/template.js';
import { splitsLists, type ShellSlot } from './shell-slot.js';
import { checkNeeds, type ShellNeed } from './value-shape.js';

/** A shell template: the author's texts around the slots, and where each slot stands. */
export interface ShellTemplate {
  /** One more than there are slots. */
  readonly texts: readonly string[];
  readonly slots: readonly ShellSlot[];
}

/**
 * Linux refuses to start a program with an environment string longer than this
 * (`MAX_ARG_STRLEN`, 32 pages): the most one value can hold, its name included.
 */
export const MAX_SHELL_VALUE_BYTES = 128 * 1024;
/** The most all values of one command may hold together (the whole environment is bounded too). */
export const MAX_SHELL_VALUES_BYTES = 1024 * 1024;

/** The variables a rendering hands to the command, named `DIRIGENT_V0`, `DIRIGENT_V1`, …. */
export class ShellVariables {
  /** Name → value, to be added to the environment of the command. */
  readonly values: Record<string, string> = {};
  private count = 0;
  private bytes = 0;
  /** Each command rendered with these variables → the command as its author wrote it. */
  private readonly written = new Map<string, string>();

  /**
   * `text` as its author wrote it (`echo hi {input:customer}`) when it is a command rendered with
   * these variables (`echo hi "${DIRIGENT_V0}"`), else `text`: for messages, which speak of the
   * directive, not of the form bash was handed.
   */
  asWritten(text: string): string {
    return this.written.get(text) ?? text;
  }

  /** Records that the command `rendered` was written as `written`. */
  remember(rendered: string, written: string): void {
    this.written.set(rendered, written);
  }

  /** Adds `value` (the value of the template `label`) and returns the variable's name. */
  add(value: string, label: string): string {
    const name = `DIRIGENT_V${this.count++}`;
    const size = Buffer.byteLength(value) + name.length + 1;
    this.bytes += size;
    if (size > MAX_SHELL_VALUE_BYTES || this.bytes > MAX_SHELL_VALUES_BYTES) {
      const one = size > MAX_SHELL_VALUE_BYTES;
      throw DirigentError.fatal(
        ErrorCode.INPUT_TOO_LARGE,
        one
          ? `${label} is ${kib(size)} KiB, more than a shell command can be given (${kib(MAX_SHELL_VALUE_BYTES)} KiB per value); the command was not run.`
          : `The values of this shell command add up to more than ${kib(MAX_SHELL_VALUES_BYTES)} KiB; the command was not run.`,
        {
          hint: 'Write large data to a file (dirigent/fs/write) and read the file in the command.',
          details: { template: label },
        },
      );
    }
    this.values[name] = value;
    return name;
  }
}

/** How a rendering treats its values. */
export interface ShellRenderOptions {
  /**
   * Values may begin with `-` where a program reads options (the parameter is marked
   * `allow_options="true"`: its values are meant to be options).
   */
  allowOptions?: boolean;
  /** Slots whose values are the operator's (`{env:NAME}`): no shape is asked of them. */
  trusted?: readonly number[];
}

/**
 * The command text of `template` with `values` (one per slot; `labels` are the slots' template
 * texts, for messages) written in as variable references, which are added to `vars`. Throws a
 * fatal `UNSAFE_VALUE` when a value does not have the shape its slot needs (`ShellSlot.needs`),
 * and `INPUT_TOO_LARGE` when values are too large for a command's environment.
 */
export function renderShell(
  template: ShellTemplate,
  values: readonly unknown[],
  labels: readonly string[],
  vars: ShellVariables,
  options: ShellRenderOptions = {},
): string {
  let out = template.texts[0]!;
  let written = out;
  template.slots.forEach((slot, i) => {
    const label = labels[i] ?? 'a value';
    const needs = options.trusted?.includes(i) === true ? [] : needsOf(slot, options);
    out += renderSlot(slot, values[i], label, vars, needs) + template.texts[i + 1]!;
    written += label + template.texts[i + 1]!;
  });
  vars.remember(out, written);
  return out;
}

/** The needs a slot's value must meet under `options`. */
export function needsOf(slot: ShellSlot, options: ShellRenderOptions = {}): readonly ShellNeed[] {
  if (!options.allowOptions) return slot.needs;
  return slot.needs.filter((n) => n.shape !== 'not-option' && n.shape !== 'no-options');
}

function renderSlot(
  slot: ShellSlot,
  value: unknown,
  label: string,
  vars: ShellVariables,
  needs: readonly ShellNeed[],
): string {
  if (Array.isArray(value) && splitsLists(slot)) {
    // A list standing as a word of its own becomes one word per element, as "$@" does.
    return value
      .map((item) => {
        const text = textOf(item, label);
        checkNeeds(text, needs, label);
        return `"\${${vars.add(text, label)}}"`;
      })
      .join(' ');
  }
  const text = textOf(value, label);
  checkNeeds(text, needs, label);
  if (slot.quoting === 'heredoc-quoted') {
    // Nothing is expanded in such a here-document: the value is written as it is.
    if (/[\r\n]/.test(text) || text === slot.delimiter) {
      throw unsafe(
        `${label} stands in a here-document with a quoted delimiter, where a value is written as it is; its value holds a line break or the delimiter, which would end the document early`,
        "Use an unquoted delimiter (<<EOF instead of <<'EOF'), where values are expanded as data.",
        label,
      );
    }
    return text;
  }
  const ref = `\${${vars.add(text, label)}}`;
  switch (slot.quoting) {
    case 'none':
      return slot.arithmetic ? ref : `"${ref}"`;
    case 'single':
      return `'"${ref}"'`;
    case 'ansi':
      return `'"${ref}"$'`;
    default: // double quotes, here-documents and comments expand (or ignore) a bare reference
      return ref;
  }
}

/** The text a value is written as; NUL bytes cannot reach a program's environment. */
function textOf(value: unknown, label: string): string {
  const text = stringifyValue(value);
  if (text.includes('\0')) {
    throw unsafe(
      `${label} holds a NUL byte, which no shell variable can hold`,
      'Remove NUL bytes from the value before it reaches a shell command.',
      label,
    );
  }
  return text;
}

function unsafe(what: string, hint: string, label: string): DirigentError {
  return DirigentError.fatal(ErrorCode.UNSAFE_VALUE, `${what}; the command was not run.`, {
    hint,
    details: { template: label },
  });
}

function kib(bytes: number): number {
  return Math.ceil(bytes / 1024);
}

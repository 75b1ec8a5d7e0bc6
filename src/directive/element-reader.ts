import { closest } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';
import type { Diagnostics } from './diagnostics.js';
import type { XmlElement } from './xml-element.js';

/**
 * Reads attributes of one element against the set it may have: unknown ones are errors with a
 * "did you mean", missing required ones are errors naming the element and its line.
 */
export class ElementReader {
  constructor(
    readonly el: XmlElement,
    private readonly diag: Diagnostics,
    allowed: readonly string[],
    required: readonly string[] = [],
  ) {
    let typos: Set<string> | undefined; // made only for an unknown attribute: most elements have none
    for (const name in el.attrs) {
      if (!allowed.includes(name)) {
        const near = closest(name, allowed);
        if (near !== undefined) (typos ??= new Set()).add(near);
        diag.error(
          ErrorCode.UNKNOWN_ATTRIBUTE,
          `${labelOf(el)} has no attribute "${name}".${near === undefined ? '' : ` Did you mean "${near}"?`}`,
          attrLoc(el, name),
          `Allowed attributes of <${el.tag}>: ${allowed.join(', ') || 'none'}.`,
        );
      }
    }
    for (const name of required) {
      // A misspelt required attribute is reported once, as the unknown one with its "did you mean".
      if (typos?.has(name) === true && el.attrs[name] === undefined) continue;
      if (el.attrs[name] === undefined || el.attrs[name].trim() === '') {
        diag.error(
          ErrorCode.MISSING_ATTRIBUTE,
          `${labelOf(el)} needs ${article(name)} "${name}" attribute${el.attrs[name] === undefined ? '' : ' that is not empty'}.`,
          el.attrs[name] === undefined ? el.loc : attrLoc(el, name),
          `Write <${el.tag} ${name}="…">.`,
        );
      }
    }
  }

  str(name: string): string | undefined {
    return this.el.attrs[name];
  }

  /** An integer attribute with a lower bound; bad values are reported and give undefined. */
  int(name: string, min: number): number | undefined {
    const raw = this.el.attrs[name];
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isInteger(n) || n < min) {
      this.invalid(
        name,
        raw,
        `an integer of at least ${min}`,
        `Write a whole number of at least ${min}, without a unit, e.g. ${name}="${Math.max(min, 3)}".`,
      );
      return undefined;
    }
    return n;
  }

  /** A non-negative number attribute (seconds may be fractional). */
  num(name: string): number | undefined {
    const raw = this.el.attrs[name];
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n) || n < 0) {
      this.invalid(
        name,
        raw,
        'a non-negative number',
        `Write a number of at least 0, without a unit, e.g. ${name}="30".`,
      );
      return undefined;
    }
    return n;
  }

  bool(name: string): boolean | undefined {
    const raw = this.el.attrs[name];
    if (raw === undefined) return undefined;
    if (/^true$/i.test(raw)) return true;
    if (/^false$/i.test(raw)) return false;
    this.invalid(name, raw, '"true" or "false"', `Write ${name}="true" or ${name}="false".`);
    return undefined;
  }

  oneOf<T extends string>(
    name: string,
    values: readonly T[],
    fallback: T,
    aliases: Readonly<Record<string, T>> = {},
  ): T {
    const raw = this.el.attrs[name];
    if (raw === undefined) return fallback;
    if ((values as readonly string[]).includes(raw)) return raw as T;
    const near = aliases[raw.toLowerCase()] ?? closest(raw, values);
    this.invalid(
      name,
      raw,
      `one of ${values.join(', ')}${near === undefined ? '' : `. Did you mean "${near}"?`}`,
      `Write ${name}="${near ?? values[0]}"${near === undefined ? ` or another of ${values.join(', ')}` : ''}.`,
    );
    return fallback;
  }

  /** Reports that attribute `name` holds `raw`, which is not `expected`. */
  invalid(name: string, raw: string, expected: string, hint?: string): void {
    this.diag.error(
      ErrorCode.INVALID_ATTRIBUTE,
      `${labelOf(this.el, name)}: ${name}="${raw}" is not valid; ${name} must be ${expected}${/[.?]$/.test(expected) ? '' : '.'}`,
      attrLoc(this.el, name),
      hint,
    );
  }
}

/** `<step name="x">`, or `<retry>` for an element without a name: how messages refer to it. */
export function labelOf(el: XmlElement, except?: string): string {
  const name = el.attrs.name;
  return name !== undefined && name !== '' && except !== 'name'
    ? `<${el.tag} name="${name}">`
    : `<${el.tag}>`;
}

/** Where attribute `name` of `el` is written, else where the element starts. */
export function attrLoc(el: XmlElement, name: string): SourceLocation {
  return el.attrAt?.(name) ?? el.loc;
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}

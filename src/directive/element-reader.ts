import { didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { Diagnostics } from './diagnostics.js';
import type { XmlElement } from './xml-tree.js';

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
    for (const name of Object.keys(el.attrs)) {
      if (!allowed.includes(name)) {
        diag.error(
          ErrorCode.UNKNOWN_ATTRIBUTE,
          `<${el.tag}> has no attribute "${name}".${didYouMean(name, allowed)}`,
          el.loc,
          `Allowed attributes of <${el.tag}>: ${allowed.join(', ') || 'none'}.`,
        );
      }
    }
    for (const name of required) {
      if (el.attrs[name] === undefined || el.attrs[name].trim() === '') {
        diag.error(ErrorCode.MISSING_ATTRIBUTE, `<${el.tag}> needs a "${name}" attribute.`, el.loc, `Write <${el.tag} ${name}="…">.`);
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
    if (!Number.isInteger(n) || n < min) {
      this.invalid(name, raw, `an integer of at least ${min}`);
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
      this.invalid(name, raw, 'a non-negative number');
      return undefined;
    }
    return n;
  }

  bool(name: string): boolean | undefined {
    const raw = this.el.attrs[name];
    if (raw === undefined) return undefined;
    if (/^true$/i.test(raw)) return true;
    if (/^false$/i.test(raw)) return false;
    this.invalid(name, raw, '"true" or "false"');
    return undefined;
  }

  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const raw = this.el.attrs[name];
    if (raw === undefined) return fallback;
    if ((values as readonly string[]).includes(raw)) return raw as T;
    this.invalid(name, raw, `one of ${values.join(', ')}${didYouMean(raw, values)}`);
    return fallback;
  }

  invalid(name: string, raw: string, expected: string): void {
    this.diag.error(
      ErrorCode.INVALID_ATTRIBUTE,
      `<${this.el.tag} ${name}="${raw}">: ${name} must be ${expected}.`,
      this.el.loc,
    );
  }
}

/**
 * The regular expressions of JSONata expressions (`$match(s, /…/)`, `$contains`, `$replace`,
 * `$split`), run by RE2 (`re2js`) instead of JavaScript's backtracking engine: RE2's time is
 * linear in the text's length whatever the pattern, so no value can make `/^(a+)+$/` hold the
 * event loop for seconds. JSONata takes the engine as its `RegexEngine` option and uses the small
 * part of `RegExp` written here: `lastIndex` and `exec`.
 */
import type * as Re2jsPackage from 're2js';
import { lazyPackage } from '../lazy-package.js';

const re2js = lazyPackage<typeof Re2jsPackage>('re2js');

/** A regex literal's pattern as RE2 reads it; throws RE2's syntax error for what it cannot run. */
export function compileRe2(regex: RegExp): Re2jsPackage.RE2JS {
  const { RE2JS } = re2js();
  const flags =
    (regex.flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0) |
    (regex.flags.includes('m') ? RE2JS.MULTILINE : 0);
  return RE2JS.compile(RE2JS.translateRegExp(regex.source), flags);
}

/**
 * What JSONata needs of a `RegExp` with the `g` flag (it adds it to every literal): `exec` finds
 * the next match at or after `lastIndex` and moves `lastIndex` to its end.
 */
export class Re2RegExp {
  lastIndex = 0;
  private readonly re: Re2jsPackage.RE2JS;
  /** The matcher of the last text searched: `$replace` and `$split` search one text many times. */
  private matcher: Re2jsPackage.Matcher | undefined;
  private text: string | undefined;

  constructor(regex: RegExp) {
    this.re = compileRe2(regex);
  }

  exec(text: string): ((string | undefined)[] & { index: number }) | null {
    if (this.text !== text || this.matcher === undefined) {
      this.matcher = this.re.matcher(text);
      this.text = text;
    }
    const m = this.matcher;
    if (this.lastIndex > text.length || !m.find(this.lastIndex)) {
      this.lastIndex = 0;
      return null;
    }
    // As RegExp's: a group that took part in no match is undefined.
    const groups: (string | undefined)[] = [];
    for (let g = 0; g <= m.groupCount(); g++) groups.push(m.group(g) ?? undefined);
    this.lastIndex = m.end();
    return Object.assign(groups, { index: m.start() });
  }
}

/**
 * The grep's shortcut: a file without the text every match must hold (`requiredText`) is skipped
 * undecoded. That text must be in every string the pattern matches, whatever the pattern.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eachMatchingLine, requiredText, textFinder } from '../../../src/tools/text-finder.js';

const how = { literal: false, caseInsensitive: false };

describe('requiredText', () => {
  it('is the literal start of a pattern, up to what makes a character optional', () => {
    expect(requiredText('TODO: \\w+', how)).toBe('TODO: ');
    expect(requiredText('TODOS?x', how)).toBe('TODO');
    expect(requiredText('a\\.bcd(e)', how)).toBe('a.bcd');
    expect(requiredText('foo|bar', how)).toBeUndefined();
    expect(requiredText('ab', how)).toBeUndefined();
    expect(requiredText('abc', { ...how, caseInsensitive: true })).toBeUndefined();
    expect(requiredText('a(b', { ...how, literal: true })).toBe('a(b');
  });

  it('is held by every match of any pattern', () => {
    const token = fc.constantFrom(
      'a',
      'b',
      'ab',
      'abc',
      '.',
      '\\.',
      '?',
      '*',
      '+',
      '{2}',
      '(a|b)',
      '[ab]',
      '\\w',
      '^',
      '$',
      'x',
      '|',
      '\\d',
    );
    const pattern = fc.array(token, { minLength: 1, maxLength: 8 }).map((t) => t.join(''));
    const text = fc
      .array(fc.constantFrom('a', 'b', 'c', 'x', '.', '1', ' ', '\n'), { maxLength: 40 })
      .map((t) => t.join(''));
    fc.assert(
      fc.property(pattern, text, (p, t) => {
        let find: (from: number) => number;
        try {
          find = textFinder(p, how)(t);
        } catch {
          return; // not a pattern RE2 reads
        }
        const needle = requiredText(p, how);
        if (needle !== undefined && find(0) !== -1)
          expect(t, `${p} in ${JSON.stringify(t)}`).toContain(needle);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('eachMatchingLine', () => {
  it('names each matching line once, with its first match, across \\n and \\r\\n', () => {
    const text = 'one two\r\ntwo two\nthree\ntwo';
    const seen: [number, number][] = [];
    eachMatchingLine(
      text,
      textFinder('two', how)(text),
      (m) => (seen.push([m.line, m.column]), true),
    );
    expect(seen).toEqual([
      [1, 4],
      [2, 0],
      [4, 0],
    ]);
  });
});

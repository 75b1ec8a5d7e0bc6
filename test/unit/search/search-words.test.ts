import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  forEachWord,
  phraseAt,
  phraseText,
  searchWords,
} from '../../../src/search/search-words.js';

const spans = (text: string) => {
  const out: [string, number][] = [];
  forEachWord(text, (word, offset) => out.push([word, offset]));
  return out;
};

describe('forEachWord', () => {
  it('gives the words of searchWords with where each starts', () => {
    expect(spans('deploy the app, then  résumé/2')).toEqual([
      ['deploy', 0],
      ['the', 7],
      ['app', 11],
      ['then', 16],
      ['résumé', 22],
      ['2', 29],
    ]);
    expect(spans(' -- ')).toEqual([]);
  });

  it('agrees with searchWords on any lowercased text', () => {
    const text = fc.oneof(
      fc.string({ unit: 'grapheme' }),
      fc.string({ unit: 'binary' }),
      fc.string({
        unit: fc.constantFrom('a', 'É', ' ', '-', '\ud83d', '\ude00', '𝔸', '٣', '\u0301'),
      }),
    );
    fc.assert(
      fc.property(text, (raw) => {
        const text = raw.toLowerCase();
        const found = spans(text);
        expect(found.map(([w]) => w)).toEqual(searchWords(text));
        for (const [w, at] of found) expect(text.startsWith(w, at)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('phraseAt', () => {
  /** Every place `phraseAt` finds `phrase` in `text` (as phrases are compared: lowercased). */
  const places = (text: string, phrase: string) => {
    const wanted = phraseText(phrase);
    const lead = wanted.search(/[\p{L}\p{N}]/u);
    const lower = text.toLowerCase();
    return Array.from({ length: lower.length + 1 }, (_, at) => at).filter((at) =>
      phraseAt(lower, at, wanted, lead),
    );
  };

  it('compares a run of whitespace in the text with one space of the phrase', () => {
    expect(places('deploy \n\t the app', 'deploy the')).toEqual([0]);
    expect(places('deploy,the', 'deploy the')).toEqual([]);
    expect(places('Deploy THE App', 'deploy the app')).toEqual([0]);
  });

  it('places the phrase by where its first word starts, its lead before that', () => {
    expect(places('quick start (old)', '(old)')).toEqual([13]);
    expect(places('quick start ( old)', '( old)')).toEqual([14]);
    expect(places('quick start (  old)', '( old)')).toEqual([15]);
    expect(places('bathe apply', 'the app')).toEqual([2]);
    expect(places('x', 'x y')).toEqual([]);
  });

  it('finds the phrase where its phrase form occurs in the text’s, and only there', () => {
    const chunk = fc.constantFrom('a', 'b', 'ab', ' ', '  ', '\n', ',', '(', ')', '-', 'é');
    fc.assert(
      fc.property(
        fc.array(chunk, { maxLength: 12 }).map((c) => c.join('')),
        fc.array(chunk, { minLength: 1, maxLength: 5 }).map((c) => c.join('')),
        (text, phrase) => {
          const wanted = phraseText(phrase);
          const lead = wanted.search(/[\p{L}\p{N}]/u);
          fc.pre(lead >= 0);
          const lower = text.toLowerCase();
          const anywhere = Array.from({ length: lower.length + 1 }, (_, at) => at).some((at) =>
            phraseAt(lower, at, wanted, lead),
          );
          expect(anywhere).toBe(phraseText(text).includes(wanted));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

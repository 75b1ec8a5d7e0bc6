/**
 * How item text and query terms are split into words, shared by the index and the plain scan so
 * that both see the same words: runs of letters and digits, lowercased; everything else
 * (spaces, punctuation, symbols) separates words.
 */

const SEPARATORS = /[^\p{L}\p{N}]+/u;

/** The lowercased words of `text`, in order. */
export function searchWords(text: string): string[] {
  return text
    .toLowerCase()
    .split(SEPARATORS)
    .filter((w) => w !== '');
}

/**
 * Calls `visit` with each word of `lowercased` (text already lowercased: the words of
 * {@link searchWords}, in order) and where it starts in the text. Reads the text character by
 * character (ASCII directly, other characters looked up once), faster than a regular
 * expression that makes a match object per word.
 */
export function forEachWord(
  lowercased: string,
  visit: (word: string, offset: number) => void,
): void {
  const length = lowercased.length;
  let start = -1;
  for (let i = 0; i < length; ) {
    const c = lowercased.charCodeAt(i);
    let width = 1;
    let word: boolean;
    if (c < 0x80)
      word = (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a);
    else if (
      c >= 0xd800 &&
      c <= 0xdbff &&
      i + 1 < length &&
      isLowSurrogate(lowercased.charCodeAt(i + 1))
    ) {
      width = 2;
      word = WORD_CHARACTER.test(lowercased.slice(i, i + 2));
    } else word = isWordUnit(c);
    if (word) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      visit(lowercased.slice(start, i), start);
      start = -1;
    }
    i += width;
  }
  if (start >= 0) visit(lowercased.slice(start), start);
}

const WORD_CHARACTER = /^[\p{L}\p{N}]$/u;
/** Per UTF-16 code unit outside ASCII: 0 not looked at yet, 1 a letter or digit, 2 not. */
const WORD_UNITS = new Uint8Array(0x10000);

function isWordUnit(c: number): boolean {
  let known = WORD_UNITS[c]!;
  if (known === 0) WORD_UNITS[c] = known = WORD_CHARACTER.test(String.fromCharCode(c)) ? 1 : 2;
  return known === 1;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/**
 * How far (in edits) a query word may be from a word of an item and still match it: none for
 * words shorter than 4 characters, 1 for 4 and 5, 2 from 6 (so a swapped pair of letters,
 * `deplyo` for `deploy`, is found).
 */
export function fuzzyDistance(word: string): number {
  return word.length < 4 ? 0 : word.length < 6 ? 1 : 2;
}

/** Lowercase, with every run of whitespace made one space: the form phrases are compared in. */
export function phraseText(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

/**
 * Whether `phrase` (in {@link phraseText}'s form) occurs in `phraseText(text)` where its first
 * `lead` characters end at `at`, `text` being lowercased but with its whitespace as it is: the
 * comparison of a phrase with one place in an item's text, without making its phrase form.
 */
export function phraseAt(text: string, at: number, phrase: string, lead: number): boolean {
  let j = at;
  for (let i = lead - 1; i >= 0; i--) {
    const c = phrase.charCodeAt(i);
    if (c === SPACE) {
      if (j === 0 || !isSpace(text.charCodeAt(j - 1))) return false;
      while (j > 0 && isSpace(text.charCodeAt(j - 1))) j--;
    } else if (j === 0 || text.charCodeAt(--j) !== c) return false;
  }
  j = at;
  for (let i = lead; i < phrase.length; i++) {
    const c = phrase.charCodeAt(i);
    if (c === SPACE) {
      if (j === text.length || !isSpace(text.charCodeAt(j))) return false;
      while (j < text.length && isSpace(text.charCodeAt(j))) j++;
    } else if (j === text.length || text.charCodeAt(j++) !== c) return false;
  }
  return true;
}

const SPACE = 0x20;
const WHITESPACE = /\s/;

/** Whether a UTF-16 code unit is whitespace as `\s` has it (which {@link phraseText} folds). */
function isSpace(c: number): boolean {
  if (c < 0x80) return c === SPACE || (c >= 0x09 && c <= 0x0d);
  return WHITESPACE.test(String.fromCharCode(c));
}

/** `word` written backwards (by code point). */
export function backwards(word: string): string {
  let out = '';
  for (const c of word) out = c + out;
  return out;
}

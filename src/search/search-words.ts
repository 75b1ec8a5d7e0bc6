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

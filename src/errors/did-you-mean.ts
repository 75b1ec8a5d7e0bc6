/** Levenshtein distance, small and allocation-light; inputs here are short names. */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * The closest candidate to `word`, if one is close enough to be a likely typo
 * (distance at most 2, or a third of the word's length for long words).
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.max(2, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

/** ` Did you mean "x"?` or the empty string. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const match = closest(word, candidates);
  return match === undefined ? '' : ` Did you mean "${match}"?`;
}

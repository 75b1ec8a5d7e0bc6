/**
 * Dotted paths into run data (`state.files.0.path`): objects are walked by key, arrays by integer
 * index. These run for every template and condition of every step, so the walkers allocate
 * nothing on their own; only the error path ({@link explainMiss}) builds strings.
 */

/**
 * What {@link lookupPath} returns for a miss. A symbol, so that it is distinct from every JSON
 * value and from `undefined`, which callers may want to treat differently later.
 */
export const MISSING: unique symbol = Symbol('missing');

/** Shared result of a miss, so that {@link getPath} does not allocate on the common miss path. */
const NOT_FOUND: { readonly found: false; readonly value: undefined } = Object.freeze({
  found: false,
  value: undefined,
});

/** Splits a dotted path into its segments; the empty path has none. Numeric segments stay strings. */
export function splitPath(path: string): string[] {
  return path === '' ? [] : path.split('.');
}

/**
 * The array index a segment denotes, or -1 when it is not a canonical non-negative integer
 * (`"0"`, `"12"`; not `"01"`, `"-1"`, `"1.0"`). Parsed by hand to avoid `Number()` accepting
 * `" 1"`, `"0x1"` or `"1e0"`, and to avoid allocating.
 */
export function arrayIndex(segment: string): number {
  const n = segment.length;
  // 15 digits stay exact in a double; no real array is longer anyway.
  if (n === 0 || n > 15 || (n > 1 && segment.charCodeAt(0) === 48)) return -1;
  let value = 0;
  for (let i = 0; i < n; i++) {
    const digit = segment.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * Walks `segments[from..end)` from `root`. Returns the value found, or {@link MISSING} when a
 * segment has nothing under it (unknown key, index out of range, a primitive in the way) or the
 * value reached is `undefined`. Only own properties count, so `constructor` or `__proto__` never
 * leak out of plain data.
 */
export function lookupPath(
  root: unknown,
  segments: readonly string[],
  from = 0,
  end: number = segments.length,
): unknown {
  let current = root;
  for (let i = from; i < end; i++) {
    if (current === null || typeof current !== 'object') return MISSING;
    const segment = segments[i]!;
    if (Array.isArray(current)) {
      const index = arrayIndex(segment);
      if (index < 0 || index >= current.length) return MISSING;
      current = current[index];
    } else {
      if (!Object.prototype.hasOwnProperty.call(current, segment)) return MISSING;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current === undefined ? MISSING : current;
}

/**
 * Reads `segments` under `root`. `found` is false on any miss (see {@link lookupPath}); a
 * present `null` is found. The object returned on a miss is shared and frozen: do not mutate it.
 */
export function getPath(
  root: unknown,
  segments: readonly string[],
): { found: boolean; value: unknown } {
  const value = lookupPath(root, segments);
  return value === MISSING ? NOT_FOUND : { found: true, value };
}

/** Why a path did not resolve, for error messages. */
export interface MissExplanation {
  /** One sentence: `"cnt" is not set in state (it has: count, files)`. */
  message: string;
  /** The segment that missed. */
  segment: string;
  /** The keys that exist where the miss happened, for "did you mean" suggestions. */
  candidates: string[];
}

/** Most keys an error message lists; a state with hundreds of keys would drown the message. */
const MAX_LISTED_KEYS = 20;

/**
 * Explains why `segments` (whose first element names `root`, e.g. `["state", "cnt"]`) does not
 * resolve under the defined value `root`: which segment missed, under which path, and what exists
 * there. Slow on purpose (it is only called to build an error).
 */
export function explainMiss(root: unknown, segments: readonly string[]): MissExplanation {
  let depth = 1;
  while (depth < segments.length && lookupPath(root, segments, 1, depth + 1) !== MISSING) depth++;
  const segment = segments[depth] ?? '';
  const where = segments.slice(0, depth).join('.');
  const container = depth === 1 ? root : lookupPath(root, segments, 1, depth);
  let candidates: string[] = [];
  let what: string;
  if (Array.isArray(container)) {
    what =
      arrayIndex(segment) < 0
        ? `it is an array; index it with a number`
        : `it is an array of ${container.length} item${container.length === 1 ? '' : 's'}`;
  } else if (container !== null && typeof container === 'object') {
    candidates = Object.keys(container).filter(
      (key) => (container as Record<string, unknown>)[key] !== undefined,
    );
    const listed = candidates.slice(0, MAX_LISTED_KEYS).join(', ');
    const more = candidates.length > MAX_LISTED_KEYS ? `, … ${candidates.length} in all` : '';
    what = candidates.length === 0 ? 'it is empty' : `it has: ${listed}${more}`;
  } else {
    what = container === null ? 'it is null' : `it is a ${typeof container}`;
  }
  return { message: `"${segment}" is not set in ${where} (${what})`, segment, candidates };
}

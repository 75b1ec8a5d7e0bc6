/** How a tool's result differs from what an example expects (see `ToolExample.output`). Pure. */

/**
 * Where `actual` first departs from `expected`, as `at /path: expected …, got …`, or undefined
 * when it matches: an expected object by each key it gives (others are not compared), an
 * expected array by length and item, anything else by equality.
 */
export function exampleDifference(expected: unknown, actual: unknown, at = ''): string | undefined {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return differ(at, expected, actual);
    if (actual.length !== expected.length)
      return `at ${at || '/'}: expected ${expected.length} items, got ${actual.length}: ${show(actual)}`;
    for (let i = 0; i < expected.length; i++) {
      const d = exampleDifference(expected[i], actual[i], `${at}/${i}`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return differ(at, expected, actual);
    for (const [key, value] of Object.entries(expected)) {
      if (!(key in actual)) return `at ${at}/${key}: expected ${show(value)}, got nothing`;
      const d = exampleDifference(value, (actual as Record<string, unknown>)[key], `${at}/${key}`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  return Object.is(expected, actual) ? undefined : differ(at, expected, actual);
}

function differ(at: string, expected: unknown, actual: unknown): string {
  return `at ${at || '/'}: expected ${show(expected)}, got ${show(actual)}`;
}

/** A value as JSON, cut to 200 characters. */
function show(value: unknown): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

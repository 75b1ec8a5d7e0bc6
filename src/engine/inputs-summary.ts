/**
 * A run's inputs in a few words (`customer=c7, amount=12`), for the lines of a run list, so that
 * a person can tell runs of one directive apart. Capped: each value at {@link MAX_VALUE}
 * characters, the whole at {@link MAX_SUMMARY}. Made at every start, so it never reads more of a
 * value than it shows: a list is its length (`[3 items]`), an object its first keys. Pure.
 */

/** The most characters of one value a summary keeps. */
export const MAX_VALUE = 40;
/** The most characters a summary holds. */
export const MAX_SUMMARY = 120;

/** `inputs` as `name=value, …`, capped; undefined when there are none. */
export function inputsSummary(inputs: Record<string, unknown>): string | undefined {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(inputs)) parts.push(`${name}=${valueText(value)}`);
  return parts.length === 0 ? undefined : cut(parts.join(', '), MAX_SUMMARY);
}

/** A value in at most {@link MAX_VALUE} characters: a text's first line, a list's length. */
function valueText(value: unknown): string {
  if (typeof value === 'string')
    return cut(value.slice(0, MAX_VALUE + 1).split(/\r?\n/)[0]!, MAX_VALUE);
  if (Array.isArray(value)) return `[${value.length} item${value.length === 1 ? '' : 's'}]`;
  if (value !== null && typeof value === 'object') {
    const keys: string[] = [];
    for (const key in value) if (keys.push(key) > 3) break;
    return cut(`{${keys.slice(0, 3).join(', ')}${keys.length > 3 ? ', …' : ''}}`, MAX_VALUE);
  }
  return cut(String(value), MAX_VALUE);
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

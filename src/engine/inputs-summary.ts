/**
 * A run's inputs in a few words (`customer=c7, amount=12`), for the lines of a run list, so that
 * a person can tell runs of one directive apart. Capped: each value at {@link MAX_VALUE}
 * characters, the whole at {@link MAX_SUMMARY}. Pure.
 */

/** The most characters of one value a summary keeps. */
export const MAX_VALUE = 40;
/** The most characters a summary holds. */
export const MAX_SUMMARY = 120;

/** `inputs` as `name=value, …`, capped; undefined when there are none. */
export function inputsSummary(inputs: Record<string, unknown>): string | undefined {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(inputs)) {
    const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
    parts.push(`${name}=${cut(text.split(/\r?\n/)[0]!, MAX_VALUE)}`);
  }
  return parts.length === 0 ? undefined : cut(parts.join(', '), MAX_SUMMARY);
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * Durations as people write them in settings and options: a number and a unit (`7d`, `12h`,
 * `30m`, `45s`, `1.5d`), or a plain number of seconds (`3600`). Pure.
 */

/** Seconds per unit a duration may be written in. */
const UNIT_SECONDS: Readonly<Record<string, number>> = {
  s: 1,
  m: 60,
  h: 3600,
  d: 86_400,
  w: 604_800,
};

/** A duration's text: a non-negative decimal number, then an optional unit. */
const DURATION = /^(\d+(?:\.\d+)?|\.\d+)\s*([smhdw]?)$/;

/** What {@link parseDuration} accepts, for hints. */
export const DURATION_EXAMPLES = '7d, 12h, 30m, 45s, or a number of seconds (3600)';

/**
 * The seconds `text` says (`7d` → 604800, `12h` → 43200, `30m` → 1800, `90` → 90), or undefined
 * when it is no duration. A number (from YAML, say) is seconds. Zero is a duration: callers that
 * need a positive one check it.
 */
export function parseDuration(text: string | number): number | undefined {
  if (typeof text === 'number') return Number.isFinite(text) && text >= 0 ? text : undefined;
  const m = DURATION.exec(text.trim());
  if (m === null) return undefined;
  const seconds = Number(m[1]) * UNIT_SECONDS[m[2] || 's']!;
  return Number.isFinite(seconds) ? seconds : undefined;
}

/** A number of seconds as the largest unit that writes it whole: `604800` → `7d`, `90` → `90s`. */
export function formatDuration(seconds: number): string {
  for (const unit of ['w', 'd', 'h', 'm'] as const) {
    const per = UNIT_SECONDS[unit]!;
    if (seconds >= per && seconds % per === 0) return `${seconds / per}${unit}`;
  }
  return `${seconds}s`;
}

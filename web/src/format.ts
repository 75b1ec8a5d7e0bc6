/** How the console writes times, durations and values. */

/** `1.2 s`, `340 ms`, `2 min 5 s`, `1 h 3 min`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** A moment as local date and time, to the second. */
export function when(ms: number): string {
  const d = new Date(ms);
  const today = new Date();
  const time = d.toLocaleTimeString(undefined, { hour12: false });
  return d.toDateString() === today.toDateString()
    ? time
    : `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${time}`;
}

/** A value as indented JSON text (never HTML: the console shows it as text). */
export function json(value: unknown): string {
  if (value === undefined) return '';
  try {
    return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** A run id short enough for a list: its first 8 characters. */
export function shortId(id: string): string {
  return id.length > 12 ? id.slice(0, 8) : id;
}

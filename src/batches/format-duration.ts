/**
 * A duration as people read it in a progress line: `0s`, `15s`, `2m05s`, `1h02m`, `3d04h`. Seconds
 * are rounded down, so an elapsed time never runs ahead of the clock.
 */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.floor(Number.isFinite(ms) ? ms / 1000 : 0));
  if (total < 60) return `${total}s`;
  const minutes = Math.floor(total / 60);
  if (minutes < 60) return `${minutes}m${pad(total % 60)}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h${pad(minutes % 60)}m`;
  return `${Math.floor(hours / 24)}d${pad(hours % 24)}h`;
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * How long a tool may run.
 */

/** RYE's runtime default when no link sets `config.timeout`. */
const DEFAULT_TIMEOUT_MS = 300_000;

/** The tool's time budget: `config.timeout` (seconds, RYE) and a declared `limits.timeout_ms`. */
export function timeoutOf(config: Record<string, unknown>, limitMs: number | undefined): number {
  const configured = Number(config.timeout);
  const fromConfig =
    Number.isFinite(configured) && configured > 0 ? configured * 1000 : DEFAULT_TIMEOUT_MS;
  return Math.min(fromConfig, limitMs ?? Infinity);
}

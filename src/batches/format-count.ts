const GROUPED = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const ONE_DECIMAL = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

/** A count with thousands separators: `12,345`. */
export function formatCount(n: number): string {
  return GROUPED.format(n);
}

/** A rate per second: whole numbers from 10 up (`812/s`, `12,001/s`), one decimal below (`2.5/s`). */
export function formatRate(perSecond: number): string {
  if (!Number.isFinite(perSecond) || perSecond <= 0) return '0/s';
  return `${(perSecond >= 10 ? GROUPED : ONE_DECIMAL).format(perSecond)}/s`;
}

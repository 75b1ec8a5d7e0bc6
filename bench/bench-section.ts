import type { BenchRow } from './bench-row.js';

/** One table of the report, with remarks about how the figures came about. */
export interface BenchSection {
  title: string;
  rows: BenchRow[];
  /** Printed under the table, one paragraph each. */
  notes: string[];
}

/** A directive text made up by a benchmark. */
export interface GeneratedDirective {
  /** The file name it is loaded as (never read from disk). */
  file: string;
  text: string;
  /** Steps one run of it records; each run is checked to complete with exactly this many. */
  steps: number;
}

/** A run's counters, kept beside its snapshot and stored with it. */
export interface RunCounters {
  /** Node entries so far, checked against `<limits max_steps>`. */
  transitions: number;
  /** Child runs started, checked against `<limits spawns>`. */
  spawns: number;
}

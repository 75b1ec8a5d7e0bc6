/** One call of a Python tool's `execute` on a warm host. */
export interface PythonHostCall {
  /** The interpreter (hosts are kept per interpreter and project directory). */
  python: string;
  /** The tool file, an absolute path. */
  file: string;
  /** How messages name the tool. */
  itemId: string;
  params: Record<string, unknown>;
  /** The project directory: the host's working directory and `execute`'s `project_path`. */
  projectDir: string;
  /** Extra variables (declared secrets) set in `os.environ` for this call only, then removed. */
  env?: Record<string, string>;
  /**
   * The W3C `traceparent` of the span running the call: `os.environ["TRACEPARENT"]` during the
   * call, removed for a call without one (a warm host serves many calls, so it travels per call).
   */
  traceparent?: string;
  /**
   * `rye` (the default): a result dict with `success: false` is a failure. `seed`: the result
   * is returned as it is.
   */
  format?: 'rye' | 'seed';
  signal: AbortSignal;
  /** Time the call may take once a host has taken it (queueing is not counted). */
  timeoutMs: number;
}

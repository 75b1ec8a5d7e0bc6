/**
 * A worked example of a tool: seed 003's `examples` (`input`, expected `output`, `description`),
 * which `dirigent tool test` runs. Built-in tools add what their examples need around the call:
 * files in a fresh project, pages served on 127.0.0.1, an expected error.
 */
export interface ToolExample {
  /** What the example shows, one line. */
  description: string;
  /** The parameters of the call. */
  input: Record<string, unknown>;
  /**
   * What the result must hold: an object matches when each key it gives matches (others are
   * not compared), an array when it has as many items and each matches, anything else when equal.
   */
  output?: unknown;
  /** The error the call must fail with instead of a result: its code, and whether retryable. */
  error?: { code: string; retryable?: boolean };
  /** Files (project-relative path → text) written into the example's fresh project first. */
  files?: Record<string, string>;
  /**
   * Pages (path → page) a server on 127.0.0.1 answers while the example runs. `{server}` in the
   * input, the expected output and `files` stands for that server's `host:port`.
   */
  serve?: Record<string, ServedPage>;
}

/** One page an example's server answers. */
export interface ServedPage {
  /** HTTP status (default 200). */
  status?: number;
  /** Content type (default `text/plain; charset=utf-8`). */
  type?: string;
  headers?: Record<string, string>;
  body?: string;
}

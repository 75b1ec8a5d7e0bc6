import { PythonHostPool } from './python-host-pool.js';

let pool: PythonHostPool | undefined;

/**
 * The pool that Python function tools run on, made on first use (and made again after it was
 * closed). Call `close()` on it before the process exits to stop its hosts at once; otherwise
 * idle hosts exit by themselves when Node does.
 */
export function defaultPythonHostPool(): PythonHostPool {
  if (pool === undefined || pool.closed) pool = new PythonHostPool();
  return pool;
}

import { DirigentError } from '../../src/errors/index.js';

/** The DirigentError that `fn` throws; fails the test when it throws nothing or something else. */
export function thrown(fn: () => unknown): DirigentError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DirigentError) return err;
    throw err;
  }
  throw new Error('expected a DirigentError, but nothing was thrown');
}

/** The DirigentError `promise` rejects with; fails the test when it resolves or rejects otherwise. */
export async function rejection(promise: Promise<unknown>): Promise<DirigentError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DirigentError) return err;
    throw err;
  }
  throw new Error('expected a rejection with a DirigentError, but the promise resolved');
}

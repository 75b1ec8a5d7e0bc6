import { describe, expect, it } from 'vitest';
import { DirigentError } from '../../../src/errors/dirigent-error.js';
import { ErrorCode } from '../../../src/errors/error-codes.js';
import { transient } from '../../../src/redis/run-worker/come-back-later.js';

describe('a run job that fails for a while comes back; one that fails for good does not', () => {
  it('takes Redis being away (restarting, loading its data, a dropped connection) for a while', () => {
    expect(transient(new Error('connect ECONNREFUSED 127.0.0.1:6379'))).toBe(true);
    expect(transient(new Error('Connection is closed.'))).toBe(true);
    expect(transient(new Error('LOADING Redis is loading the dataset in memory'))).toBe(true);
    expect(transient(DirigentError.from(new Error('read ECONNRESET')))).toBe(true);
  });

  it('takes a retryable error of the engine (a run busy elsewhere) for a while', () => {
    expect(transient(DirigentError.retryable(ErrorCode.RUN_BUSY, 'busy'))).toBe(true);
  });

  it('fails a job on a fatal error, or on a bug', () => {
    expect(transient(DirigentError.fatal(ErrorCode.DIRECTIVE_MISMATCH, 'differs'))).toBe(false);
    expect(transient(new TypeError("Cannot read properties of undefined (reading 'x')"))).toBe(
      false,
    );
    expect(transient(DirigentError.from(new TypeError('undefined is not a function')))).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import {
  DirigentError,
  isDirigentError,
  type SerializedError,
} from '../../../src/errors/dirigent-error.js';
import { ErrorCode, isErrorCode } from '../../../src/errors/error-codes.js';
import { errorBodyOf } from '../../../src/api/error-body-of.js';

/** A serialised error as it crosses a process boundary: through JSON text. */
const overTheWire = (data: SerializedError): SerializedError =>
  JSON.parse(JSON.stringify(data)) as SerializedError;

describe('DirigentError', () => {
  it('round-trips a known code through toJSON and fromJSON unchanged', () => {
    const sent = DirigentError.retryable(ErrorCode.STEP_TIMEOUT, 'Step "a" ran too long.', {
      hint: 'Raise its timeout.',
      location: { file: 'd.md', line: 3, column: 1 },
      details: { step: 'a' },
    });
    const back = DirigentError.fromJSON(overTheWire(sent.toJSON()));
    expect(back.code).toBe(ErrorCode.STEP_TIMEOUT);
    expect(back.toJSON()).toEqual(sent.toJSON());
  });

  // A worker of a newer version may send a code this process does not know; a run record written
  // by one may hold it.
  it('keeps a code from another version: INTERNAL here, the original in details, sent on as it came', () => {
    const fromNewer: SerializedError = {
      code: 'QUOTA_EXCEEDED',
      message: 'The tool ran out of quota.',
      retryable: true,
      hint: 'Wait for the quota to refill.',
      details: { quota: 'calls' },
    };
    expect(isErrorCode(fromNewer.code)).toBe(false);
    const here = DirigentError.fromJSON(overTheWire(fromNewer));
    expect(here.code).toBe(ErrorCode.INTERNAL);
    expect(here).toMatchObject({
      message: 'The tool ran out of quota.',
      retryable: true,
      hint: 'Wait for the quota to refill.',
      details: { quota: 'calls', originalCode: 'QUOTA_EXCEEDED' },
    });
    expect(here.sentCode).toBe('QUOTA_EXCEEDED');
    expect(here.describe()).toContain('[QUOTA_EXCEEDED]');
    // Passed on (stored in a record, sent to a client), it is the error that came in.
    expect(here.toJSON()).toMatchObject({ code: 'QUOTA_EXCEEDED', retryable: true });
    expect(DirigentError.fromJSON(overTheWire(here.toJSON())).sentCode).toBe('QUOTA_EXCEEDED');
    // An HTTP client is answered with it too.
    expect(errorBodyOf(here).error.code).toBe('QUOTA_EXCEEDED');
  });

  it('is told apart from other errors, and by its code, with isDirigentError', () => {
    const err = DirigentError.fatal(ErrorCode.RUN_NOT_FOUND, 'No run with id r.');
    expect(isDirigentError(err)).toBe(true);
    expect(isDirigentError(err, ErrorCode.RUN_NOT_FOUND)).toBe(true);
    expect(isDirigentError(err, ErrorCode.RUN_ENDED)).toBe(false);
    expect(isDirigentError(Object.assign(new Error('x'), { code: 'RUN_NOT_FOUND' }))).toBe(false);
    expect(isDirigentError(undefined)).toBe(false);
  });

  it('wraps anything thrown as a fatal INTERNAL error, and leaves a DirigentError as it is', () => {
    const plain = DirigentError.from(new Error('boom'));
    expect(plain).toMatchObject({ code: ErrorCode.INTERNAL, message: 'boom', retryable: false });
    const own = DirigentError.fatal(ErrorCode.CANCELLED, 'Stopped.');
    expect(DirigentError.from(own)).toBe(own);
  });
});

import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DirigentError } from '../../../src/errors/dirigent-error.js';
import { ErrorCode } from '../../../src/errors/error-codes.js';
import { ignoreCode, ignoreMissing, isMissing } from '../../../src/errors/ignore-expected.js';

describe('ignoreMissing', () => {
  it('turns a path that does not exist into undefined', async () => {
    const missing = join(tmpdir(), `dirigent-no-such-${process.pid}`, 'file');
    await expect(readFile(missing).catch(ignoreMissing)).resolves.toBeUndefined();
  });

  it('rethrows every other failure: reading a folder is not "missing"', async () => {
    await expect(readFile(tmpdir()).catch(ignoreMissing)).rejects.toMatchObject({
      code: 'EISDIR',
    });
    expect(isMissing(Object.assign(new Error('x'), { code: 'EACCES' }))).toBe(false);
    expect(isMissing(Object.assign(new Error('x'), { code: 'ENOTDIR' }))).toBe(true);
  });
});

describe('ignoreCode', () => {
  it('drops the one DirigentError code expected, and rethrows any other', async () => {
    const unknown = DirigentError.fatal(ErrorCode.UNKNOWN_TOOL, 'No tool "x" in any space.');
    const invalid = DirigentError.fatal(ErrorCode.INVALID_ITEM_ID, '"../x" is not an item id.');
    const expected = ignoreCode(ErrorCode.UNKNOWN_TOOL);
    await expect(Promise.reject(unknown).catch(expected)).resolves.toBeUndefined();
    await expect(Promise.reject(invalid).catch(expected)).rejects.toBe(invalid);
    await expect(Promise.reject(new Error('boom')).catch(expected)).rejects.toThrow('boom');
  });
});

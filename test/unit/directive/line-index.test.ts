/** Offsets to lines and columns, asked in file order (as the readers do) or in any order. */
import { describe, expect, it } from 'vitest';
import { LineIndex } from '../../../src/directive/line-index.js';

const TEXT = 'ab\n\ncd\nefg\n';

/** Line and column of `offset`, counted character by character. */
function counted(offset: number): { line: number; column: number } {
  let line = 1;
  let column = 1;
  for (let i = 0; i < offset; i++) {
    if (TEXT[i] === '\n') {
      line++;
      column = 1;
    } else column++;
  }
  return { line, column };
}

describe('LineIndex', () => {
  const offsets = [...Array(TEXT.length + 1).keys()];

  it('places every offset, asked in file order', () => {
    const lines = new LineIndex('f.md', TEXT);
    for (const o of offsets) expect(lines.at(o)).toEqual({ file: 'f.md', ...counted(o) });
  });

  it('places every offset, asked backwards and at random after any other', () => {
    const lines = new LineIndex('f.md', TEXT);
    const order = [...offsets].reverse().concat([7, 0, 11, 3, 3, 4, 10, 1, 8, 2]);
    for (const o of order) expect(lines.at(o)).toEqual({ file: 'f.md', ...counted(o) });
  });

  it('turns a line and column back into the offset', () => {
    const lines = new LineIndex('f.md', TEXT);
    for (const o of offsets) {
      const { line, column } = lines.at(o);
      expect(lines.offsetOf(line, column)).toBe(o);
    }
  });
});

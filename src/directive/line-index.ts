import type { SourceLocation } from '../errors/source-location.js';

/** Maps character offsets of one file to 1-based line and column numbers. */
export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(
    readonly file: string,
    text: string,
  ) {
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1))
      this.starts.push(i + 1);
  }

  /** The location of `offset` (0-based) in the file. */
  at(offset: number): SourceLocation {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { file: this.file, line: lo + 1, column: offset - this.starts[lo]! + 1 };
  }

  /** The offset of a 1-based line and column. */
  offsetOf(line: number, column: number): number {
    return (this.starts[line - 1] ?? 0) + column - 1;
  }
}

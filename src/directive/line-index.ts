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

  /** The line (0-based) of the last offset asked for: readers ask in file order, mostly. */
  private last = 0;

  /** The location of `offset` (0-based) in the file. */
  at(offset: number): SourceLocation {
    const starts = this.starts;
    let lo = this.last;
    if (starts[lo]! <= offset && (lo + 1 === starts.length || offset < starts[lo + 1]!)) {
      // the same line as last time
    } else if (starts[lo]! <= offset && lo + 2 < starts.length && offset < starts[lo + 2]!) {
      lo++; // the next line
    } else {
      lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! <= offset) lo = mid;
        else hi = mid - 1;
      }
    }
    this.last = lo;
    return { file: this.file, line: lo + 1, column: offset - starts[lo]! + 1 };
  }

  /** The offset of a 1-based line and column. */
  offsetOf(line: number, column: number): number {
    return (this.starts[line - 1] ?? 0) + column - 1;
  }
}

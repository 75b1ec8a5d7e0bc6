/** Reading a project file as text for the search tools, one file at a time, without following links. */
import { closeSync, constants, openSync, readSync } from 'node:fs';

/** Bytes looked at for a NUL to call a file binary (as git and ripgrep do). */
export const BINARY_SNIFF_BYTES = 8000;

/** What reading one file gave. */
export type TextFileRead =
  | { kind: 'text'; text: string }
  | { kind: 'binary' | 'too_large' | 'unreadable' | 'without' };

/**
 * Reads a file for a search, synchronously (a search reads thousands of small files, where the
 * promise machinery costs more than the reads; the caller yields to the event loop between
 * batches). The file is opened with `O_NOFOLLOW`, so a symbolic link put in place of a listed
 * file is refused rather than followed out of the project. Files over `maxBytes` and files with a
 * NUL in their first {@link BINARY_SNIFF_BYTES} bytes are not decoded, nor files without the
 * bytes of `needle` (`without`: a search whose every match holds a known text skips the others
 * without decoding them). The buffer is reused between calls.
 */
export class TextFileReader {
  private buffer = Buffer.allocUnsafe(64 * 1024);

  constructor(
    private readonly maxBytes: number,
    private readonly needle?: Buffer,
  ) {}

  read(path: string): TextFileRead {
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch {
      return { kind: 'unreadable' };
    }
    try {
      // Read until the end (no fstat first: one system call less per file, and the size may
      // change meanwhile anyway); a short read of a regular file means its end.
      let length = 0;
      for (;;) {
        const n = readSync(fd, this.buffer, length, this.buffer.length - length, null);
        length += n;
        if (length > this.maxBytes) return { kind: 'too_large' };
        if (length < this.buffer.length) break;
        const bigger = Buffer.allocUnsafe(Math.min(this.buffer.length * 2, this.maxBytes + 1));
        this.buffer.copy(bigger, 0, 0, length);
        this.buffer = bigger;
      }
      if (this.buffer.subarray(0, Math.min(length, BINARY_SNIFF_BYTES)).includes(0))
        return { kind: 'binary' };
      if (this.needle !== undefined && this.buffer.subarray(0, length).indexOf(this.needle) === -1)
        return { kind: 'without' };
      return { kind: 'text', text: this.buffer.toString('utf8', 0, length) };
    } catch {
      return { kind: 'unreadable' };
    } finally {
      closeSync(fd);
    }
  }
}

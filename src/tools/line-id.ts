/** RYE's line ids (LIDs): short, content-bound names of a file's lines. */
import { createHash } from 'node:crypto';

/**
 * The id RYE's `read` gives line `n` (1-based) holding `content` (without its line break): the
 * first 6 hex digits of SHA-256 of `"<n>:<content>"`. Computed from the file as it is, an id
 * names a line only while that line keeps its number and its text, so an edit by id made after
 * the file changed is refused rather than applied to the wrong line.
 */
export function lineId(n: number, content: string): string {
  return createHash('sha256').update(`${n}:${content}`).digest('hex').slice(0, 6);
}

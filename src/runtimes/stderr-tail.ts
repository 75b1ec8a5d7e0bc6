/**
 * The last `lines` lines of a process's stderr (at most `maxChars` characters), for error
 * messages; empty when there was none.
 */
export function stderrTail(stderr: string, lines = 5, maxChars = 2000): string {
  const tail = stderr.trimEnd().split('\n').slice(-lines).join('\n');
  return tail.length > maxChars ? `…${tail.slice(-maxChars)}` : tail;
}

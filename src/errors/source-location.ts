/** A place in a file, 1-based, as editors show it. */
export interface SourceLocation {
  file: string;
  line: number;
  column: number;
}

/** Formats a location the way compilers do, so terminals and editors make it clickable. */
export function formatLocation(loc: SourceLocation): string {
  return `${loc.file}:${loc.line}:${loc.column}`;
}

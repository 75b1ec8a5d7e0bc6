import type { Scope } from '../expr/scope.js';
import { compileTemplate } from '../expr/template.js';

/**
 * Instruction text for a person: templates filled in where they resolve and left as written
 * elsewhere (RYE prose mentions templates it does not mean), and the source indentation removed.
 */
export function instructionText(text: string, scope: Scope): string {
  let out = text;
  try {
    out = String(compileTemplate(text).evaluate(scope));
  } catch {
    // keep the text as written
  }
  return dedent(out);
}

/** Removes the indentation common to all lines but the first, and surrounding blank space. */
export function dedent(text: string): string {
  const lines = text.split('\n');
  const indents = lines
    .slice(1)
    .filter((l) => l.trim() !== '')
    .map((l) => /^\s*/.exec(l)![0].length);
  const cut = indents.length ? Math.min(...indents) : 0;
  return [lines[0]!.trim(), ...lines.slice(1).map((l) => l.slice(cut))].join('\n').trim();
}

/**
 * The shell scanner inside the contexts a command context opens: double quotes, arithmetic
 * (`$(( ))`, `(( ))`, `$[ ]`), `${…}` and here-document bodies.
 */
import type { ShellCursor } from './shell-cursor.js';
import { newCmd, type Frame, type Unit } from './shell-frame.js';

/** Reads unit `u` inside double quotes (and `$"…"`). */
export function scanDouble(cur: ShellCursor, u: Unit): void {
  if (typeof u === 'number') cur.record(u, cur.quoted('double'));
  else if (u === '"') cur.stack.pop();
  else if (u === '\\') cur.skipEscaped();
  else if (u === '$') cur.dollar();
  else if (u === '`') cur.stack.push(newCmd('`'));
}

/** Reads unit `u` inside arithmetic `f`: every slot there is arithmetic. */
export function scanArith(cur: ShellCursor, f: Extract<Frame, { kind: 'arith' }>, u: Unit): void {
  if (typeof u === 'number') {
    cur.record(u, { ...cur.quoted('none'), arithmetic: true, program: false });
    return;
  }
  if (u === '(') f.parens++;
  else if (u === ')') {
    if (f.close === '))' && f.parens === 0 && cur.peek() === ')') {
      cur.i++;
      cur.stack.pop();
    } else f.parens = Math.max(0, f.parens - 1);
  } else if (u === ']' && f.close === ']') cur.stack.pop();
  else if (u === '$') cur.dollar();
  else if (u === '`') cur.stack.push(newCmd('`'));
}

/** Reads unit `u` inside `${…}` (`f`), quoted as the text around it; a subscript is arithmetic. */
export function scanParam(cur: ShellCursor, f: Extract<Frame, { kind: 'param' }>, u: Unit): void {
  const enclosing = cur.enclosingQuoting();
  if (typeof u === 'number') {
    const slot = { ...cur.quoted(enclosing), wholeWord: false };
    cur.record(u, f.subscript ? { ...slot, arithmetic: true } : slot);
    return;
  }
  if (u === '}') {
    if (f.braces === 0) cur.stack.pop();
    else f.braces--;
  } else if (u === '{') f.braces++;
  else if (u === '[') f.subscript = true;
  else if (u === ']') f.subscript = false;
  else if (u === '\\') cur.skipEscaped();
  else if (u === '$') cur.dollar();
  else if (u === '`') cur.stack.push(newCmd('`'));
  else if (u === '"') cur.stack.push({ kind: 'double' });
  else if (u === "'" && enclosing === 'none') cur.stack.push({ kind: 'single' });
}

/** Reads unit `u` of a here-document body `f`, which ends at the line equal to its delimiter. */
export function scanHeredoc(
  cur: ShellCursor,
  f: Extract<Frame, { kind: 'heredoc' }>,
  u: Unit,
): void {
  if (typeof u === 'number') {
    f.line += '\0';
    const slot = cur.quoted(f.quoted ? 'heredoc-quoted' : 'heredoc');
    cur.record(u, f.quoted ? { ...slot, delimiter: f.delimiter } : slot);
    return;
  }
  if (u === '\n') {
    const line = f.strip ? f.line.replace(/^\t+/, '') : f.line;
    f.line = '';
    if (line === f.delimiter) {
      cur.stack.pop();
      const [next, ...rest] = f.queue;
      if (next !== undefined) cur.stack.push({ ...next, kind: 'heredoc', line: '', queue: rest });
    }
    return;
  }
  f.line += u;
  if (f.quoted) return;
  if (u === '\\') {
    const next = cur.peek();
    if (typeof next === 'string') f.line += next;
    cur.skipEscaped();
  } else if (u === '$') cur.dollar();
  else if (u === '`') cur.stack.push(newCmd('`'));
}

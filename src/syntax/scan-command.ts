/**
 * The shell scanner in a command context (the text itself, `$(…)`, backquotes, `<(…)`): words,
 * operators, redirections, here-document operators, and the quotes and `$` forms that open a
 * context of their own.
 */
import { endShellCommand, endShellWord } from './end-shell-word.js';
import type { ShellCursor } from './shell-cursor.js';
import { newCmd, type Cmd, type Unit } from './shell-frame.js';
import { ASSIGNING, NAME } from './shell-words.js';

/** Reads unit `u` of the template in the command context `c`. */
export function scanCommand(cur: ShellCursor, c: Cmd, u: Unit): void {
  if (typeof u === 'number') {
    const starts = c.word === undefined;
    cur.startWord(c);
    cur.record(u, {
      quoting: 'none',
      arithmetic: c.arith || c.subscript,
      reparsedBy: c.reparse,
      program: c.commandPos && !c.redirect && !ASSIGNING.test(c.word!),
      wholeWord: starts && cur.isBoundary(cur.peek(), c),
    });
    c.word += '\0';
    return;
  }
  switch (u) {
    case ' ':
    case '\t':
      return endShellWord(c);
    case '\n':
      endShellCommand(c);
      return cur.startHeredocs(c);
    case ';':
      return endShellCommand(c);
    case '&':
      if (cur.peek() === '>') return redirection(cur, c);
      if (cur.peek() === '&') cur.i++;
      return endShellCommand(c);
    case '|':
      if (cur.peek() === '|' || cur.peek() === '&') cur.i++;
      return endShellCommand(c);
    case '<':
    case '>':
      return angle(cur, c, u);
    case '(':
      if (c.commandPos && c.word === undefined && cur.peek() === '(') {
        cur.i++;
        cur.stack.push({ kind: 'arith', parens: 0, close: '))' });
        return;
      }
      endShellWord(c);
      c.parens++;
      return endShellCommand(c);
    case ')':
      if (c.parens > 0) {
        c.parens--;
        return endShellCommand(c);
      }
      if (c.close === ')') {
        endShellWord(c);
        cur.stack.pop();
        return;
      }
      return endShellCommand(c); // a `case` pattern: a command follows
    case '`':
      if (c.close === '`') {
        endShellWord(c);
        cur.stack.pop();
        return;
      }
      cur.startWord(c);
      cur.stack.push(newCmd('`'));
      return;
    case "'":
      cur.startWord(c);
      cur.stack.push({ kind: 'single' });
      return;
    case '"':
      cur.startWord(c);
      cur.stack.push({ kind: 'double' });
      return;
    case '\\':
      if (cur.peek() === '\n') {
        cur.i++; // a line continuation
        return;
      }
      cur.startWord(c);
      if (typeof cur.peek() === 'string') c.word += cur.units[++cur.i] as string;
      return;
    case '#':
      if (c.word === undefined) {
        cur.stack.push({ kind: 'comment' });
        return;
      }
      c.word += u;
      return;
    case '$':
      cur.startWord(c);
      if (cur.peek() === "'") {
        cur.i++;
        cur.stack.push({ kind: 'ansi' });
        return;
      }
      if (cur.peek() === '"') {
        cur.i++;
        cur.stack.push({ kind: 'double' });
        return;
      }
      if (!cur.dollar()) c.word += u;
      return;
    case '[':
      cur.startWord(c);
      if (c.commandPos && NAME.test(c.word!)) c.subscript = true;
      c.word += u;
      return;
    case ']':
      cur.startWord(c);
      c.subscript = false;
      c.word += u;
      return;
    default:
      cur.startWord(c);
      c.word += u;
  }
}

/** `<`, `>` and what follows: a process substitution, a here-document or a redirection. */
function angle(cur: ShellCursor, c: Cmd, u: '<' | '>'): void {
  if (cur.peek() === '(') {
    cur.startWord(c);
    cur.i++;
    cur.stack.push(newCmd(')'));
    return;
  }
  if (u === '<' && cur.peek() === '<' && cur.peek(2) !== '<') {
    cur.i++;
    heredocOperator(cur, c);
    return;
  }
  redirection(cur, c);
}

/** A redirection operator (`>`, `>>`, `2>&1`, `&>`, `<<<`, …): the next word is its target. */
function redirection(cur: ShellCursor, c: Cmd): void {
  // A word of digits just before the operator is the file descriptor, not a word.
  if (c.word !== undefined && /^\d+$/.test(c.word)) c.word = undefined;
  endShellWord(c);
  while ('<>&|'.includes(String(cur.peek()))) cur.i++;
  c.redirect = true;
}

/** `<<` (or `<<-`) and its delimiter word; the body starts after the next newline. */
function heredocOperator(cur: ShellCursor, c: Cmd): void {
  endShellWord(c);
  let strip = false;
  if (cur.peek() === '-') {
    strip = true;
    cur.i++;
  }
  while (cur.peek() === ' ' || cur.peek() === '\t') cur.i++;
  let delimiter = '';
  let quoted = false;
  let quote: string | undefined;
  for (let next = cur.peek(); next !== undefined; next = cur.peek()) {
    if (typeof next === 'number') {
      // A value in the delimiter: no line can be known to end the body.
      cur.record(next, cur.quoted('none'));
      delimiter += '\0';
      quoted = true;
    } else if (quote !== undefined) {
      if (next === quote) quote = undefined;
      else delimiter += next;
    } else if (next === "'" || next === '"') {
      quote = next;
      quoted = true;
    } else if (next === '\\') {
      quoted = true;
    } else if (' \t\n;&|<>()'.includes(next)) break;
    else delimiter += next;
    cur.i++;
  }
  c.heredocs.push({ delimiter, quoted, strip });
}

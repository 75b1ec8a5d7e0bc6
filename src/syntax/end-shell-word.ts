/**
 * What the end of a word or of a simple command tells the shell scanner: whether the next word
 * names a program, whether later words are parsed as code again (`eval`, `sh -c`), and, at `]]`,
 * which operands of `[[ … ]]` bash evaluates as arithmetic.
 */
import type { Cmd } from './shell-frame.js';
import {
  ARITH_OPS,
  ASSIGNMENT,
  BEFORE_COMMAND,
  BEFORE_DATA,
  programName,
  REPARSE_PROGRAMS,
  SHELLS,
} from './shell-words.js';

/** Ends the word being read in `c` (if any) and settles what it says about the words after it. */
export function endShellWord(c: Cmd): void {
  const word = c.word;
  if (word === undefined) return;
  c.word = undefined;
  if (c.redirect) {
    c.redirect = false;
    return;
  }
  if (c.bracket !== undefined) return bracketWord(c, word);
  if (c.reparseWords !== undefined && --c.reparseWords <= 0) {
    c.reparse = undefined;
    c.reparseWords = undefined;
  }
  if (c.commandPos) {
    if (ASSIGNMENT.test(word) || BEFORE_COMMAND.has(word)) return;
    c.commandPos = false;
    if (BEFORE_DATA.has(word)) return;
    if (word === '[[') {
      c.bracket = { words: 0, ops: [], slots: [] };
      return;
    }
    const name = programName(word);
    if (REPARSE_PROGRAMS.has(name)) c.reparse = name;
    else if (name === 'let') c.arith = true;
    else if (SHELLS.has(name)) c.shell = name;
    return;
  }
  const name = programName(word);
  if (c.reparse !== undefined) return;
  if (SHELLS.has(name)) c.shell = name;
  else if (c.shell !== undefined && /^-[A-Za-z]*c[A-Za-z]*$/.test(word)) {
    c.reparse = `${c.shell} -c`;
    c.reparseWords = 1;
  }
}

/** A word inside `[[ … ]]`; at `]]`, the operands of arithmetic operators become arithmetic. */
function bracketWord(c: Cmd, word: string): void {
  const b = c.bracket!;
  if (word !== ']]') {
    if (ARITH_OPS.has(word)) b.ops.push(b.words);
    for (const slot of c.wordSlots) b.slots.push([b.words, slot]);
    b.words++;
    return;
  }
  for (const [at, slot] of b.slots) {
    if (b.ops.includes(at - 1) || b.ops.includes(at + 1)) slot.arithmetic = true;
  }
  c.bracket = undefined;
}

/** Ends the simple command `c`: the next word names a program again. */
export function endShellCommand(c: Cmd): void {
  endShellWord(c);
  c.commandPos = true;
  c.redirect = false;
  c.reparse = undefined;
  c.reparseWords = undefined;
  c.shell = undefined;
  c.arith = false;
  c.subscript = false;
  if (c.bracket !== undefined) bracketWord(c, ']]');
}

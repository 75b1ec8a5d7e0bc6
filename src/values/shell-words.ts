/**
 * Small readings of shell words the analysis needs: a word's literal text, the program a word
 * names, an option's name and attached value, the parts of an assignment, every command of a
 * list. Pure.
 */
import type { Expanded } from './analysis-scope.js';
import type { Command, CommandList, Word, WordPart } from './shell-tree.js';

/** The text of a word without expansions, else undefined. */
export function literalOf(word: Word): string | undefined {
  return word.parts.every((p) => p.kind === 'text')
    ? word.parts.map((p) => (p as { text: string }).text).join('')
    : undefined;
}

/** The literal text a word begins with, up to its first expansion or value ('' when none). */
export function leadingText(a: Expanded): string {
  let text = '';
  for (const part of a.word.parts) {
    if (part.kind !== 'text') break;
    text += part.text;
  }
  return text;
}

/** The program a literal word names (`/usr/bin/env` → `env`), or undefined. */
export function programName(literal: string | undefined): string | undefined {
  if (literal === undefined || literal === '') return undefined;
  return literal.slice(literal.lastIndexOf('/') + 1);
}

/** `--name=value` → [`--name`, `value`]; `-ovalue` is left whole (short options vary). */
export function splitOption(word: string): [string, string | undefined] {
  if (word.startsWith('--')) {
    const eq = word.indexOf('=');
    return eq === -1 ? [word, undefined] : [word.slice(0, eq), word.slice(eq + 1)];
  }
  return [word, undefined];
}

/** Whether `option` takes an argument by `takes` (`-n`, or the cluster `-xn` ending in it). */
export function takesArgument(option: string, takes: readonly string[] | undefined): boolean {
  if (takes === undefined) return false;
  if (takes.includes(option)) return true;
  return /^-[A-Za-z]{2,}$/.test(option) && takes.includes(`-${option[option.length - 1]!}`);
}

/** The variable a name word names (`x`, `x[i]` → `x`), when it is literal at its start. */
export function variableOf(a: Expanded): string | undefined {
  const first = a.word.parts[0];
  if (first?.kind !== 'text') return undefined;
  return /^[A-Za-z_]\w*/.exec(first.text)?.[0];
}

/**
 * An assignment word taken apart: its name, the parts of its index (`NAME[…]=`), the parts of
 * its value; undefined when the word is no assignment.
 */
export function splitAssignment(
  word: Word,
): { name: string; index?: WordPart[]; value: WordPart[] } | undefined {
  const [first, ...rest] = word.parts;
  if (first?.kind !== 'text' || first.quoted) return undefined;
  const head = /^([A-Za-z_]\w*)(\+?=|\[)/.exec(first.text);
  if (head === null) return undefined;
  const name = head[1]!;
  const after = first.text.slice(head[0].length);
  if (head[2] !== '[') {
    return { name, value: [...textPart(after), ...rest] };
  }
  // NAME[ … ]= : the index runs to the `]` before `=` or `+=`.
  const index: WordPart[] = [];
  const parts: WordPart[] = [...textPart(after), ...rest];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.kind === 'text' && !part.quoted) {
      const close = /\]\+?=/.exec(part.text);
      if (close !== null) {
        index.push(...textPart(part.text.slice(0, close.index)));
        const value = [
          ...textPart(part.text.slice(close.index + close[0].length)),
          ...parts.slice(i + 1),
        ];
        return { name, index, value };
      }
    }
    index.push(part);
  }
  return undefined;
}

function textPart(text: string): WordPart[] {
  return text === '' ? [] : [{ kind: 'text', text, quoted: false }];
}

/** Calls `fn` on every command of `list`, nested ones included. */
export function forEachCommand(list: CommandList, fn: (c: Command) => void): void {
  for (const p of list.pipelines)
    for (const c of p.commands) {
      fn(c);
      if (c.kind === 'compound') for (const l of c.lists) forEachCommand(l, fn);
    }
}

/**
 * Where each value of a shell template lands. A template is text written by a directive's author
 * with slots for values: `echo 'Hello, {input:name}!'` is the texts `["echo 'Hello, ", "!'"]` and
 * one slot between them. The text is read as bash reads it (`read-shell.ts`) and analysed
 * (`shell-analysis.ts`) to tell, for each slot, how a reference to a variable must be written
 * there so that the value stays one piece of data, and what shape the value must have where bash,
 * or a program it starts, would read it as more than data. Pure: no I/O.
 */
import { analyseShell } from './shell-analysis.js';
import type { ShellSlot } from './shell-slot.js';

export type { ShellQuoting, ShellSlot } from './shell-slot.js';

/** Enough for every shell template of a large project; bounds memory if texts are generated. */
const CACHE_LIMIT = 1000;
const cache = new Map<string, readonly ShellSlot[]>();

/**
 * The slots of the template made of `texts` (one more text than slots), in order. Analysed once
 * per text (cached): the same templates are checked when a directive loads and rendered at every
 * call.
 */
export function shellSlots(texts: readonly string[]): readonly ShellSlot[] {
  const key = JSON.stringify(texts);
  let slots = cache.get(key);
  if (slots === undefined) {
    slots = analyseShell(texts);
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
    cache.set(key, slots);
  }
  return slots;
}

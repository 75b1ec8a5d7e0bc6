/**
 * What the shell analysis tells about each slot of a template: how a reference to the value must
 * be written where it stands, and what the value must be so that bash reads it as data there.
 */
import type { HoleSite } from './shell-tree.js';
import type { ShellNeed } from './value-shape.js';

export type { ShellQuoting } from './shell-tree.js';

/** Where a slot stands and what its value must be. */
export interface ShellSlot extends HoleSite {
  /**
   * The shapes its value must have (an integer, a name, plain words, no leading `-`, …), each
   * with the construct that asks for it; empty where any value is data.
   */
  needs: readonly ShellNeed[];
}

/** Whether a list value in `slot` becomes one word per element (each element a value of its own). */
export function splitsLists(slot: ShellSlot): boolean {
  return slot.wholeWord && slot.quoting === 'none' && !slot.arithmetic;
}

import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { ItemKind } from '../items/item-kind.js';

/** The kinds of items, as faces accept them. */
export const ITEM_KINDS: readonly ItemKind[] = ['directive', 'tool', 'knowledge'];

/** Refuses what is not a kind of item (`INVALID_REQUEST`, naming the kinds). */
export function checkKind(kind: unknown): asserts kind is ItemKind {
  if (ITEM_KINDS.includes(kind as ItemKind)) return;
  throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `"${String(kind)}" is not an item type.`, {
    hint: `Item types: ${ITEM_KINDS.join(', ')}.`,
  });
}

import type { ItemKind } from '../items/item-kind.js';
import { notAnItemKind } from '../errors/item-errors.js';

/** The kinds of items, as faces accept them. */
export const ITEM_KINDS: readonly ItemKind[] = ['directive', 'tool', 'knowledge'];

/** Refuses what is not a kind of item (`INVALID_REQUEST`, naming the kinds). */
export function checkKind(kind: unknown): asserts kind is ItemKind {
  if (ITEM_KINDS.includes(kind as ItemKind)) return;
  throw notAnItemKind(String(kind), ITEM_KINDS);
}

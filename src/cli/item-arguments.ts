import type { ItemKind } from '../items/item-kind.js';
import type { SpaceName } from '../items/space.js';
import { notAnItemKind, noSuchSpace } from '../errors/item-errors.js';

const KINDS: readonly ItemKind[] = ['directive', 'tool', 'knowledge'];

/** A command-line item type (`directive`, `tool`, `knowledge`); `INVALID_REQUEST` otherwise. */
export function parseItemKind(given: string): ItemKind {
  if ((KINDS as readonly string[]).includes(given)) return given as ItemKind;
  throw notAnItemKind(given, KINDS);
}

/**
 * A command-line space name among `allowed`, given as `option`; `INVALID_REQUEST` otherwise.
 */
export function parseSpaceName(
  given: string,
  allowed: readonly SpaceName[],
  option = '--space',
): SpaceName {
  if ((allowed as readonly string[]).includes(given)) return given as SpaceName;
  throw noSuchSpace(given, `Use ${option} ${allowed.join(` or ${option} `)}.`);
}

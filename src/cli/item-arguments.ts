import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { ItemKind } from '../items/item-kind.js';
import type { SpaceName } from '../items/space.js';

const KINDS: readonly ItemKind[] = ['directive', 'tool', 'knowledge'];

/** A command-line item type (`directive`, `tool`, `knowledge`); `INVALID_REQUEST` otherwise. */
export function parseItemKind(given: string): ItemKind {
  if ((KINDS as readonly string[]).includes(given)) return given as ItemKind;
  throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `"${given}" is not an item type.`, {
    hint: `Item types: ${KINDS.join(', ')}.`,
  });
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
  throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `"${given}" is not a space here.`, {
    hint: `Use ${option} ${allowed.join(` or ${option} `)}.`,
  });
}

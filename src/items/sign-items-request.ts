/**
 * What `signItems` is asked to sign, and with which key.
 */
import type { ItemKind } from './item-kind.js';
import type { SigningKey } from './signing/sign-item.js';
import type { Space, SpaceName } from './space.js';

/** What to sign. */
export interface SignItemsRequest {
  kind: ItemKind;
  /** An item id, or a glob of item ids (`*`, `?`; `**` across folders). */
  itemId: string;
  /** The space the item is looked up in, and signed in (default `project`). */
  space?: SpaceName;
  /** The project's spaces (`defaultSpaces(projectDir)`). */
  spaces: readonly Space[];
  /** The project: its policy for directives, its Python for Python tools. */
  projectDir: string;
  /**
   * The signing key (`readSigningKey`), or a function that reads it. A function is called once,
   * only after the space and the item (or the glob's matches) are found, so that a wrong call is
   * reported as such, not as a missing key.
   */
  key: SigningKey | (() => Promise<SigningKey>);
  /** The signing time. Default: now. */
  now?: Date;
}

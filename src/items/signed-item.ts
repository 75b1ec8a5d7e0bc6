/**
 * What `signItems` returns: one item signed, or the outcome of a glob.
 */
import type { SerializedError } from '../errors/dirigent-error.js';
import type { ItemIssue } from './item-issue.js';
import type { SpaceName } from './space.js';

/** One item signed. */
export interface SignedItem {
  status: 'signed';
  itemId: string;
  file: string;
  space: SpaceName;
  /**
   * The signature line's fields. `format` `rye`: a `rye:signed` line, `keyId` the 16-hex
   * fingerprint; `ryeos`: a `ryeos:signed` line (for an item the `rye:signed` hash would not cover
   * whole, such as a knowledge entry with `---` front matter), `keyId` the 64-hex fingerprint.
   */
  signature: { timestamp: string; hash: string; keyId: string; format: 'rye' | 'ryeos' };
  /** What the signer should know: uncovered text, validation warnings. */
  warnings: string[];
}

/** An item of a glob that was not signed, and why. */
export interface FailedItem {
  itemId: string;
  error: Pick<SerializedError, 'code' | 'message' | 'hint'>;
  /** The validation issues, when that is why. */
  issues?: ItemIssue[];
}

/** The outcome of signing a glob. */
export interface SignedBatch {
  status: 'completed';
  /** The item ids signed, in order. */
  signed: string[];
  failed: FailedItem[];
  /** How many items the glob matched. */
  total: number;
  /** The result of each item signed, in the order of {@link signed}. */
  items: SignedItem[];
}

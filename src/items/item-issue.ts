/**
 * What item validation reports: one thing wrong with an item.
 */
import type { SourceLocation } from '../errors/source-location.js';

/** One thing wrong with an item, located when it can be. */
export interface ItemIssue {
  message: string;
  location?: SourceLocation;
  hint?: string;
  /**
   * `warning`: worth saying, but no reason to refuse the signature (a knowledge entry whose
   * category is not its folder: RYE's own entries file categories by topic). Absent: an error.
   */
  severity?: 'warning';
}

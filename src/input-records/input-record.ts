/**
 * The record type shared by the readers of a batch's inputs (JSON Lines and CSV), kept apart from
 * `readInputRecords` so that the readers it dispatches to need not import it back.
 */
import type { DirigentError } from '../errors/dirigent-error.js';

/** One input of a batch, as read from its file. */
export interface InputRecord {
  /** 1-based: the line of the file (JSONL), or the record's first line (CSV). */
  line: number;
  /** The inputs of the run, when the line could be read. */
  inputs?: Record<string, unknown>;
  /**
   * Why the line could not be read (bad JSON, not an object, a CSV row with the wrong number of
   * fields, too large): the batch reports it as a failed result and goes on.
   */
  error?: DirigentError;
}

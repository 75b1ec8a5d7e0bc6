/** Errors about a directive's text that more than one reader of it finds. */
import { DirigentError } from './dirigent-error.js';
import { ErrorCode } from './error-codes.js';
import type { SourceLocation } from './source-location.js';

/**
 * `XML_TOO_DEEP`: the directive's XML nests deeper than its readers take, at `location`; `what`
 * says how (`Elements are nested more than 64 levels deep here`).
 */
export function xmlTooDeep(what: string, location: SourceLocation): DirigentError {
  return DirigentError.fatal(ErrorCode.XML_TOO_DEEP, `${what}.`, {
    location,
    hint: 'Flatten the structure: move deep blocks into their own steps or child directives.',
  });
}

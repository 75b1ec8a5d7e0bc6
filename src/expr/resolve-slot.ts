/**
 * The value of a template's slot in a scope, or why it has none.
 */
import { didYouMean, type DirigentError, ErrorCode } from '../errors/index.js';
import { explainMiss, lookupPath, MISSING } from './path.js';
import { readRoot, rootNames, type Scope } from './scope.js';
import { templateError } from './template-error.js';
import type { Slot } from './template-slot-parser.js';

/** The first alternative that is set and not null; then the default, a null, or a miss. */
export function resolveSlot(slot: Slot, scope: Scope): unknown {
  let sawNull = false;
  for (const segments of slot.paths) {
    const root = readRoot(scope, segments[0]!, true);
    const value = root === MISSING ? MISSING : lookupPath(root, segments, 1);
    if (value === null) sawNull = true;
    else if (value !== MISSING) return value;
  }
  if (slot.fallback !== undefined) return slot.fallback;
  if (sawNull) return null;
  if (slot.optional) return undefined;
  throw missing(slot, scope);
}

/** The error for a slot none of whose paths is set, with why each is not, and what to write. */
function missing(slot: Slot, scope: Scope): DirigentError {
  const hints: string[] = [];
  const reasons = slot.paths.map((segments) => {
    const name = segments[0]!;
    const root = readRoot(scope, name, true);
    if (name === 'env' && segments.length > 1) {
      // Never list the environment: it is large and its names can be sensitive.
      return `environment variable "${segments[1]}" is not set`;
    }
    if (root === MISSING) {
      const names = rootNames(scope);
      if (names.includes(name)) return `"${name}" is not set here`;
      hints.push(didYouMean(name, names).trim());
      return `"${name}" is not a known name (known: ${names.join(', ')})`;
    }
    const why = explainMiss(root, segments);
    hints.push(didYouMean(why.segment, why.candidates).trim());
    return why.message;
  });
  hints.push(`Write ${exampleFor(slot.raw)} where a missing value is acceptable.`);
  const hint = hints.filter((text) => text !== '').join(' ');
  const message = `${slot.raw}: ${reasons.join('; ')}`;
  return templateError(ErrorCode.TEMPLATE_PATH_MISSING, message, hint, slot.raw);
}

/** How to write a slot like `raw` so that a missing value is acceptable. */
function exampleFor(raw: string): string {
  if (raw.startsWith('{env:')) return '{env:VAR:default}';
  return raw.startsWith('{') ? '{input:name:default}' : '${path?}';
}

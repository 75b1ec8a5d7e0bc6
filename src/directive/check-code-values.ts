/**
 * Finds where a directive lets a value it does not control become code: a shell command, a program
 * or a URL's host chosen by a value, a value inside text that `eval` or `sh -c` parses again, a
 * tool chosen by a value. Such values are still written in as data when the step runs (see
 * `syntax/`), so these are warnings, each with the safe form; a project in strict mode refuses them.
 * Values of `{env:…}` are the operator's, not a caller's, and never count. Pure.
 */
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';
import { compileTemplate, type CompiledTemplate } from '../expr/template.js';
import { shellSlots } from '../syntax/shell-slots.js';
import type { Syntax } from '../syntax/syntax.js';
import { urlParts } from '../syntax/url-render.js';
import type { Diagnostics } from './diagnostics.js';

/** How {@link checkCodeValues} reports: a warning, or an error in strict mode. */
export interface CodeValueReport {
  diag: Diagnostics;
  strict: boolean;
}

/**
 * Checks parameter `param` of a call to tool `itemId`, written as the template `source` at `loc`,
 * whose text is in `syntax` (undefined: plain data, nothing to check).
 */
export function checkCodeValues(
  itemId: string,
  param: string,
  source: string,
  syntax: Syntax | undefined,
  loc: SourceLocation,
  report: CodeValueReport,
): void {
  if (syntax === undefined) return;
  let template: CompiledTemplate;
  try {
    template = compileTemplate(source);
  } catch {
    return; // a template that does not compile is reported where templates are checked
  }
  const controlled = (i: number) => template.slots[i]!.envName !== undefined;
  if (template.slots.every((_, i) => controlled(i))) return;
  const say = (message: string, hint: string) =>
    report.strict
      ? report.diag.error(
          ErrorCode.VALUE_AS_CODE,
          `${message} (refused: the project is in strict mode).`,
          loc,
          hint,
        )
      : report.diag.warn(ErrorCode.VALUE_AS_CODE, `${message}.`, loc, hint);
  const label = (i: number) => template.slots[i]!.raw;
  if (isWhole(template)) {
    say(
      syntax === 'shell'
        ? `The command of ${itemId} (param "${param}") is ${label(0)} and nothing else: whoever supplies that value chooses what runs`
        : `The URL of ${itemId} (param "${param}") is ${label(0)} and nothing else: whoever supplies that value chooses where the request goes`,
      syntax === 'shell'
        ? `Write the command in the directive and pass values into it, e.g. value="grep -n -- '{input:pattern}' notes.txt"; keep the whole-value form only where running the caller's command is the point.`
        : 'Write the scheme and host in the directive and pass values in the path or query, e.g. value="https://api.example.com/items/{input:id}".',
    );
    return;
  }
  if (syntax === 'url') {
    urlParts(template.texts).forEach((part, i) => {
      if (part === 'origin' && !controlled(i)) {
        say(
          `${label(i)} stands in the host of the URL of ${itemId} (param "${param}"): whoever supplies it chooses where the request goes`,
          'Write the scheme and host in the directive (or allow one of a few hosts with a condition) and pass values in the path or query.',
        );
      }
    });
    return;
  }
  shellSlots(template.texts).forEach((slot, i) => {
    if (controlled(i)) return;
    if (slot.reparsedBy !== undefined) {
      say(
        `${label(i)} is inside text that ${slot.reparsedBy} parses as shell code once more (${itemId}, param "${param}"); it runs only while its value is plain words`,
        `Pass the value as an argument of the script rather than inside it: sh -c 'echo "$1"' _ ${label(i)}.`,
      );
    } else if (slot.program) {
      say(
        `${label(i)} names the program the command runs (${itemId}, param "${param}"): whoever supplies it chooses what runs`,
        `Name the program in the directive and choose among a few with a condition, e.g. <when expr="inputs.tool = 'gzip'" to="…"/>.`,
      );
    }
  });
}

function isWhole(template: CompiledTemplate): boolean {
  return template.slots.length === 1 && template.texts.every((t) => t === '');
}

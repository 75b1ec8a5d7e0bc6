/** Errors and repairs for XML that fast-xml-parser's validator rejects. */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { LineIndex } from './line-index.js';

const SYNTAX_HINT =
  'Close every element you open, quote attribute values, and write < and & in text as &lt; and &amp;.';

/**
 * An `XML_SYNTAX` error for a message of fast-xml-parser's validator, reworded to say what is
 * wrong and how to fix it, with every line and column counted in the whole file (the validator
 * counts them in the fragment).
 */
export function syntaxError(
  msg: string,
  errOffset: number,
  text: string,
  base: number,
  lines: LineIndex,
  local: LineIndex,
): DirigentError {
  const inFile = (line: number, col: number) =>
    lines.at(Math.max(0, base + local.offsetOf(line, col)));
  let location = lines.at(Math.max(0, base + errOffset));
  let what: string;
  let hint = SYNTAX_HINT;
  let m: RegExpExecArray | null;
  if (
    (m =
      /^Expected closing tag '([^']+)' \(opened in line (\d+), col (\d+)\) instead of closing tag '([^']+)'/.exec(
        msg,
      ))
  ) {
    const opened = inFile(Number(m[2]), Number(m[3]));
    what = `found </${m[4]}> where </${m[1]}> was expected (<${m[1]}> is opened at line ${opened.line}, column ${opened.column}).`;
    hint = `Close <${m[1]}> with </${m[1]}> before </${m[4]}>, or fix the name of the closing tag.`;
  } else if ((m = /^Unclosed tag '([^']+)'/.exec(msg))) {
    what = `<${m[1]}> is never closed.`;
    hint = `Add </${m[1]}> where the element ends, or write <${m[1]} …/> when it is empty.`;
  } else if ((m = /^Invalid '\[(.*)\]' found/s.exec(msg))) {
    const names = m[1]!.split(',').map((n) => n.trim().replace(/^"|"$/g, ''));
    const innermost = names[names.length - 1] ?? '';
    const opener = [
      ...text.matchAll(new RegExp(`<${escapeRegExp(innermost)}(?=[\\s>/])`, 'g')),
    ].pop();
    if (opener?.index !== undefined) location = lines.at(Math.max(0, base + opener.index));
    what = `${names.map((n) => `<${n}>`).join(', ')} are never closed.`;
    hint = `Close them, innermost first: ${[...names]
      .reverse()
      .map((n) => `</${n}>`)
      .join('')}.`;
  } else if ((m = /^Closing tag '([^']+)' has not been opened/.exec(msg))) {
    what = `</${m[1]}> closes an element that is not open.`;
    hint = `Remove </${m[1]}>, or add the <${m[1]}> it closes.`;
  } else if (
    (m = /^Attribute '([^']+)' is without value/.exec(msg)) ||
    (m = /^boolean attribute '([^']+)' is not allowed/.exec(msg))
  ) {
    what = `attribute "${m[1]}" has no quoted value.`;
    hint = `Write ${m[1]}="…": attribute values are always in quotes.`;
  } else if ((m = /^Attributes for '([^']+)' have open quote/.exec(msg))) {
    what = `an attribute value of <${m[1]}> has no closing quote.`;
    hint = 'End every quoted value with the quote it starts with: name="…".';
  } else if ((m = /^Attribute '([^']+)' is repeated/.exec(msg))) {
    what = `attribute "${m[1]}" is given twice.`;
    hint = `Keep one ${m[1]}="…".`;
  } else if ((m = /^Attribute '([^']+)' has no space in starting/.exec(msg))) {
    what = `attribute "${m[1]}" is not separated from the one before it.`;
    hint = 'Put a space between attributes: a="1" b="2".';
  } else if (/^char '&' is not expected/.test(msg)) {
    what = 'a bare "&" is not allowed in XML.';
    hint =
      'Write "&" as &amp; (and "<" as &lt;), or move prose after the closing fence, where it is read leniently.';
  } else if (/^Invalid space after '<'/.test(msg)) {
    const lt = text.lastIndexOf('<', errOffset);
    if (lt !== -1 && errOffset - lt <= 2) location = lines.at(Math.max(0, base + lt));
    what = 'a bare "<" is not allowed in XML.';
    hint =
      'Write "<" as &lt; (and "&" as &amp;), or move prose after the closing fence, where it is read leniently.';
  } else if ((m = /^Tag '([^']*)' is an invalid name/.exec(msg))) {
    what = `"<${m[1]}" is not a valid element name.`;
    hint = 'Element names start with a letter or "_"; write a "<" in text as &lt;.';
  } else if (/^Extra text at the end|^Multiple possible root nodes/.test(msg)) {
    what = 'there is content after the closing tag of the root element.';
    hint = 'Put everything inside <directive>…</directive>.';
  } else if (/^char '.' is not expected/.test(msg)) {
    const stray = /^[^<\n]{0,30}/.exec(text.slice(errOffset))![0].trim();
    what = `the text "${stray}" stands outside any element.`;
    hint = 'Start the XML with <directive …>; put prose in the Markdown around the fence.';
  } else if (/^Start tag expected/.test(msg)) {
    what = 'it holds no element.';
    hint = 'Write <directive name="…" version="1.0.0">…</directive>.';
  } else {
    what = msg;
  }
  return DirigentError.fatal(ErrorCode.XML_SYNTAX, `The XML is not well-formed: ${what}`, {
    location,
    hint,
    details: { parserMessage: msg },
  });
}

/** Which `<` to turn into text so that validation gets further. */
export function repairOffset(
  chars: string[],
  msg: string,
  errOffset: number,
  local: LineIndex,
): number | undefined {
  const text = chars.join('');
  const mismatch =
    /Expected closing tag '([^']+)' \(opened in line (\d+), col (\d+)\) instead of closing tag '([^']+)'/.exec(
      msg,
    );
  if (mismatch) {
    const closing = mismatch[4]!;
    const openerAt = local.offsetOf(Number(mismatch[2]), Number(mismatch[3]));
    const closingAt = text.lastIndexOf(`</${closing}`, errOffset);
    // If the closing tag belongs to an element opened earlier, the stray one is the opener.
    const openedBefore = new RegExp(`<${escapeRegExp(closing)}[\\s>/]`).test(
      text.slice(0, openerAt),
    );
    return openedBefore ? findLt(text, openerAt) : closingAt === -1 ? undefined : closingAt;
  }
  const unclosed = /^Invalid '\[(.*)\]' found/s.exec(msg);
  if (unclosed) {
    const names = unclosed[1]!.split(',').map((s) => s.trim().replace(/^"|"$/g, ''));
    const last = names[names.length - 1];
    if (last === undefined) return undefined;
    const m = [...text.matchAll(new RegExp(`<${escapeRegExp(last)}(?=[\\s>/])`, 'g'))].pop();
    return m?.index;
  }
  return findLt(text, errOffset);
}

function findLt(text: string, offset: number): number | undefined {
  const at = text.lastIndexOf('<', offset);
  return at === -1 ? undefined : at;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

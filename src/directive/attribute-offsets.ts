/** Where each attribute of a start tag is written, for messages that point at one. */

/**
 * The offset of each attribute name in the start tag that begins at `start` (a `<`) of `text`.
 * The tag has passed validation, so it is well-formed: names, `=`, and quoted values.
 */
export function attributeOffsets(text: string, start: number): Record<string, number> {
  const out: Record<string, number> = Object.create(null) as Record<string, number>;
  if (text[start] !== '<') return out;
  let i = start + 1;
  while (i < text.length && !isNameEnd(text.charCodeAt(i))) i++;
  while (i < text.length) {
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    const c = text[i];
    if (c === undefined || c === '>' || c === '/') break;
    const nameStart = i;
    while (i < text.length && !isNameEnd(text.charCodeAt(i)) && text[i] !== '=') i++;
    const name = text.slice(nameStart, i);
    if (name === '') break;
    if (!(name in out)) out[name] = nameStart;
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    if (text[i] !== '=') continue;
    i++;
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    const quote = text[i];
    if (quote === '"' || quote === "'") {
      const end = text.indexOf(quote, i + 1);
      i = end === -1 ? text.length : end + 1;
    } else {
      while (i < text.length && !isSpace(text.charCodeAt(i)) && text[i] !== '>') i++;
    }
  }
  return out;
}

/** What `/\s/` matches, without running a regular expression per character of every start tag. */
function isSpace(code: number): boolean {
  if (code === 32 || (code >= 9 && code <= 13)) return true;
  return code > 127 && /\s/.test(String.fromCharCode(code));
}

/** Where a tag or attribute name ends: white space, `/` or `>`. */
function isNameEnd(code: number): boolean {
  return code === 47 || code === 62 || isSpace(code);
}

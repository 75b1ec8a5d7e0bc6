/**
 * The slots of a template, parsed: graph-style `${a.b}`, `${path?}`, `${a || b}`, and RYE's
 * `{input:x}`, `{input:x?}`, `{input:x:default}`, `{input:x|default}`, `{env:VAR}`.
 */
import { splitPath } from './path.js';
import { invalidTemplate } from './template-error.js';

/** One `${…}`, `{input:…}` or `{env:…}` occurrence. */
export interface Slot {
  raw: string;
  /** Alternatives, each starting with its root name (`["state", "x"]`). */
  paths: string[][];
  optional: boolean;
  /** The default text of `{input:x:default}` / `{input:x|default}`. */
  fallback: string | undefined;
}

/** A root name. */
const ROOT_RE = /^[A-Za-z_]\w*$/;
/** A segment of a path below its root. */
const SEGMENT_RE = /^[\w-]+$/;
/** Inside the braces of a RYE form: kind, name, then nothing, `?`, or `:`/`|` and a default. */
const RYE_RE = /^(input|env):([A-Za-z_]\w*(?:\.[\w-]+)*)(?:(\?)|[:|]([\s\S]*))?$/;

/** The slot `raw`, a `${…}` whose text inside the braces is `body`. */
export function parseDollar(raw: string, body: string): Slot {
  let optional = false;
  const paths = body.split('||').map((alternative) => {
    let text = alternative.trim();
    if (text.endsWith('?')) {
      optional = true;
      text = text.slice(0, -1).trimEnd();
    }
    if (text === '') throw invalidTemplate(raw, 'the path is empty');
    const segments = splitPath(text);
    if (!ROOT_RE.test(segments[0]!)) {
      throw invalidTemplate(
        raw,
        `"${segments[0]}" is not a name; a path starts with inputs, state, steps, result, error, env or a loop variable`,
      );
    }
    const bad = segments.find((segment) => !SEGMENT_RE.test(segment));
    if (bad !== undefined)
      throw invalidTemplate(raw, `"${bad}" in "${text}" is not a valid path segment`);
    return segments;
  });
  return { raw, paths, optional, fallback: undefined };
}

/** The slot `raw`, one of RYE's `{input:…}` and `{env:…}`. */
export function parseRye(raw: string): Slot {
  const match = RYE_RE.exec(raw.slice(1, -1));
  const kind = match?.[1];
  const name = match?.[2];
  if (match === null || kind === undefined || name === undefined) {
    throw invalidTemplate(
      raw,
      'expected {input:name}, {input:name?}, {input:name:default} or {env:VAR}',
    );
  }
  if (kind === 'env' && name.includes('.'))
    throw invalidTemplate(raw, `"${name}" is not a variable name`);
  const root = kind === 'env' ? 'env' : 'inputs';
  const segments = kind === 'env' ? [name] : splitPath(name);
  return { raw, paths: [[root, ...segments]], optional: match[3] === '?', fallback: match[4] };
}

/**
 * Joins a template's texts and values for the language its text is in: plain text, shell code or
 * a URL. The one place that decides how a value is written into text.
 */
import { stringifyValue } from '../expr/template.js';
import { renderShell, type ShellVariables } from './shell-render.js';
import { shellSlots } from './shell-slots.js';
import type { Syntax } from './syntax.js';
import { renderUrl, urlParts, type UrlTemplate } from './url-render.js';

/** A template taken apart: the author's texts (one more than values) and the values between them. */
export interface TemplatePieces {
  readonly texts: readonly string[];
  /** Each value's template text (`{input:name}`), for messages. */
  readonly labels: readonly string[];
  readonly values: readonly unknown[];
  /**
   * Slots whose values are the operator's (`{env:NAME}`, secrets): trusted like the author's text,
   * so not held to the shapes a caller's values must have.
   */
  readonly trusted?: readonly number[];
  /** The parameter is marked `allow_options="true"`: its values may be options. */
  readonly allowOptions?: boolean;
}

const CACHE_LIMIT = 1000;
const urlCache = new Map<string, UrlTemplate>();

/**
 * The value of `pieces` in `syntax`. Plain text: a template that is one value and nothing else
 * keeps the value's type, others join as text. Shell: values become variables added to `vars`
 * (see `shell-render.ts`); a command that is one value and nothing else is that value: the author
 * left the whole command to it. URL: values are encoded for their part (see `url-render.ts`).
 */
export function renderPieces(
  pieces: TemplatePieces,
  syntax: Syntax | undefined,
  vars: ShellVariables,
): unknown {
  const { texts, values, labels } = pieces;
  const whole = values.length === 1 && texts[0] === '' && texts[1] === '';
  if (syntax === 'shell') {
    if (whole) return stringifyValue(values[0]);
    return renderShell({ texts, slots: shellSlots(texts) }, values, labels, vars, {
      ...(pieces.allowOptions === true && { allowOptions: true }),
      ...(pieces.trusted !== undefined && { trusted: pieces.trusted }),
    });
  }
  if (syntax === 'url') {
    return renderUrl(
      cached(urlCache, texts, () => ({ texts, parts: urlParts(texts) })),
      values,
      labels,
    );
  }
  if (whole) return values[0];
  let out = texts[0] ?? '';
  values.forEach((value, i) => (out += stringifyValue(value) + (texts[i + 1] ?? '')));
  return out;
}

function cached<T>(cache: Map<string, T>, texts: readonly string[], build: () => T): T {
  const key = JSON.stringify(texts);
  let value = cache.get(key);
  if (value === undefined) {
    value = build();
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
    cache.set(key, value);
  }
  return value;
}

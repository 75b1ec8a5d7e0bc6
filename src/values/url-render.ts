/**
 * Writes values into a URL template as data. The template's own text decides where a request
 * goes (scheme, host and port) and how its path and query are shaped; a value is encoded for the
 * part it stands in, so that it cannot add a path segment that climbs (`..`), start a query or a
 * fragment, or carry the request (and its credentials) to another host. Pure.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { stringifyValue } from '../expr/template.js';

/** Where a slot of a URL template stands. */
export type UrlPart = 'origin' | 'path' | 'query' | 'fragment';

/** A URL template: the author's texts around the slots, and where each slot stands. */
export interface UrlTemplate {
  /** One more than there are slots. */
  readonly texts: readonly string[];
  readonly parts: readonly UrlPart[];
}

/** What a value may hold where it stands in the host: a name or an address, and a port. */
const HOST = /^[A-Za-z0-9.-]*(:\d{1,5})?$/;
/** A whole origin given by a value that starts the template (`{base}/v1/items`). */
const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?\/?$/;
/** Characters a value keeps in a path: RFC 3986's unreserved and sub-delims, `:`, `@` and `/`. */
const PATH_KEEP = /[A-Za-z0-9\-._~!$&'()*+,;=:@/]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Where each slot of the template made of `texts` stands. */
export function urlParts(texts: readonly string[]): UrlPart[] {
  const parts: UrlPart[] = [];
  let part: UrlPart = 'origin';
  let hostKnown = false;
  texts.forEach((text, index) => {
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      if (part === 'origin') {
        if (ch === ':' && text.startsWith('//', i + 1)) {
          hostKnown = true;
          i += 2;
        } else if (hostKnown && (ch === '/' || ch === '?' || ch === '#')) {
          part = ch === '/' ? 'path' : ch === '?' ? 'query' : 'fragment';
        }
      } else if (part === 'path' && (ch === '?' || ch === '#')) {
        part = ch === '?' ? 'query' : 'fragment';
      } else if (part === 'query' && ch === '#') part = 'fragment';
    }
    if (index < texts.length - 1) {
      parts.push(part);
      // A value that stands for the scheme or host leaves where the request goes to the value.
      if (part === 'origin') hostKnown = true;
    }
  });
  return parts;
}

/**
 * The URL of `template` with `values` (one per slot; `labels` are the slots' template texts, for
 * messages) encoded for their parts. A template that is one slot and nothing else is the value
 * itself: the author left the whole URL to it. Throws a fatal `UNSAFE_VALUE` for a value that
 * would change the host or climb out of the path.
 */
export function renderUrl(
  template: UrlTemplate,
  values: readonly unknown[],
  labels: readonly string[],
): string {
  const { texts, parts } = template;
  if (parts.length === 1 && texts[0] === '' && texts[1] === '') return stringifyValue(values[0]);
  let out = texts[0]!;
  parts.forEach((part, i) => {
    const label = labels[i] ?? 'a value';
    out += encodePart(part, stringifyValue(values[i]), label, i === 0 && texts[0] === '');
    out += texts[i + 1]!;
  });
  return out;
}

function encodePart(part: UrlPart, value: string, label: string, leading: boolean): string {
  // A lone surrogate cannot be percent-encoded; it becomes U+FFFD, as a browser would send it.
  const text = value.replace(LONE_SURROGATE, '\uFFFD');
  switch (part) {
    case 'origin':
      if (HOST.test(text) || (leading && ORIGIN.test(text))) return text;
      throw unsafe(
        `${label} stands in the host of a URL, and its value is not a host name (it holds characters such as / @ ? # or spaces), so it could send the request elsewhere`,
        'Take the host from the directive or the tool, and pass values in the path or the query.',
        label,
      );
    case 'path': {
      if (text.split('/').some((segment) => segment === '.' || segment === '..')) {
        throw unsafe(
          `${label} stands in the path of a URL, and its value holds a "." or ".." segment, which would climb the path`,
          'Pass a name, not a relative path; a value may hold "/" between names.',
          label,
        );
      }
      let out = '';
      for (const ch of text) out += PATH_KEEP.test(ch) ? ch : encodeURIComponent(ch);
      return out;
    }
    default:
      return encodeURIComponent(text);
  }
}

function unsafe(what: string, hint: string, label: string): DirigentError {
  return DirigentError.fatal(ErrorCode.UNSAFE_VALUE, `${what}; the request was not sent.`, {
    hint,
    details: { template: label },
  });
}

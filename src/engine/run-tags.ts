/**
 * A run's tags: key=value pairs a run is found by (a customer, an order). The directive declares
 * some (`<tag name value>` in its metadata, rendered from the run's inputs when it starts) and
 * the start may give more (`--tag k=v`, `tags` in a request), which win over the directive's of
 * the same name. Settled once, at the start, and never changed. Pure.
 */
import type { Directive } from '../directive/ast.js';
import type { RunRecord } from './run-record.js';
import { MAX_TAG_VALUE, MAX_TAGS, TAG_NAME } from '../directive/run-settings.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { compileTemplate, stringifyValue } from '../expr/template.js';

/** A run's tags, by name. */
export type RunTags = Record<string, string>;

/** What a tag's value may not hold: control characters (a line break would split an index). */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The tags of a run of `d` with `inputs` (validated), the start's `given` ones winning; undefined
 * when there are none. A declared tag whose value renders empty (it reads an input the run was
 * not given) is left out; one that renders too long or with control characters is cut to its
 * first line and to {@link MAX_TAG_VALUE} characters: a tag never stops a run.
 */
export function runTagsOf(
  d: Directive,
  inputs: Record<string, unknown>,
  given: RunTags = {},
): RunTags | undefined {
  const tags: RunTags = {};
  for (const t of d.runSettings.tags) {
    if (Object.hasOwn(given, t.name)) continue;
    let value: string;
    try {
      value = stringifyValue(compileTemplate(t.value).evaluate({ inputs, state: {}, steps: {} }));
    } catch {
      continue; // it reads what the run does not have: a tag is no reason to refuse a run
    }
    value = value.split(CONTROL)[0]!.slice(0, MAX_TAG_VALUE);
    if (value !== '') tags[t.name] = value;
  }
  Object.assign(tags, given);
  return Object.keys(tags).length === 0 ? undefined : tags;
}

/**
 * Tags as a request gives them, checked: an object of names to texts, each name a word (letters,
 * digits, `_`, `.`, `-`), each value 1 to {@link MAX_TAG_VALUE} characters without control
 * characters, at most {@link MAX_TAGS}. `INVALID_REQUEST` listing every problem.
 */
export function checkTags(tags: unknown): RunTags {
  const problems: string[] = [];
  if (tags === null || typeof tags !== 'object' || Array.isArray(tags))
    problems.push('tags are an object of names to values');
  else {
    const entries = Object.entries(tags);
    if (entries.length > MAX_TAGS) problems.push(`at most ${MAX_TAGS} tags, not ${entries.length}`);
    for (const [name, value] of entries) {
      if (!TAG_NAME.test(name))
        problems.push(
          `tag name "${name}" is not a word of letters, digits, "_", "." and "-" starting with a letter`,
        );
      if (typeof value !== 'string' || value === '' || value.length > MAX_TAG_VALUE)
        problems.push(`tag "${name}" needs a text of 1 to ${MAX_TAG_VALUE} characters`);
      else if (CONTROL.test(value)) problems.push(`tag "${name}" holds a control character`);
    }
  }
  if (problems.length === 0) return tags as RunTags;
  throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `Invalid tags: ${problems.join('; ')}.`, {
    hint: 'Give tags as name=value pairs, e.g. customer=c7 (on the command line: --tag customer=c7).',
    details: { problems },
  });
}

/** Whether `record` has every tag of `tags` (no tags asked: every record has them). */
export function hasTags(record: Pick<RunRecord, 'tags'>, tags: RunTags | undefined): boolean {
  if (tags === undefined) return true;
  for (const [name, value] of Object.entries(tags)) if (record.tags?.[name] !== value) return false;
  return true;
}

/**
 * Tags written `name<separator>value` (`customer=c7` on a command line, `customer:c7` in a query),
 * as an object, checked (see {@link checkTags}); undefined for none. `INVALID_REQUEST` for one
 * without the separator.
 */
export function parseTags(texts: readonly string[], separator = '='): RunTags | undefined {
  if (texts.length === 0) return undefined;
  const tags: RunTags = {};
  for (const text of texts) {
    const at = text.indexOf(separator);
    if (at <= 0)
      throw DirigentError.fatal(
        ErrorCode.INVALID_REQUEST,
        `"${text}" is not a tag: write name${separator}value.`,
        { hint: `For example customer${separator}c7.` },
      );
    tags[text.slice(0, at)] = text.slice(at + 1);
  }
  return checkTags(tags);
}

/**
 * A directive's run settings (`<metadata>`): tags that make its runs searchable, the priority its
 * runs start with when workers are busy, a concurrency key that bounds how many of its runs go
 * at once per key, and how long its runs are kept once ended. Read and checked here (part of the
 * AST, see `ast.ts`); the operations, stores and workers act on them.
 *
 * ```xml
 * <metadata>
 *   <tag name="customer" value="${inputs.customer}"/>
 *   <priority value="8"/>
 *   <concurrency key="${inputs.customer}" limit="1"/>
 *   <retention days="30"/>
 * </metadata>
 * ```
 *
 * Their values may read the run's inputs only (`${inputs.x}`, `{input:x}`): they are settled when
 * the run starts, before any step. The retention is a plain number: it wins over the project's
 * (`retention` in `.ai/config/dirigent.yaml`, see `policy/project-policy.ts`).
 */
import { didYouMean } from '../errors/did-you-mean.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';
import { compileTemplate } from '../expr/template.js';
import type { Diagnostics } from './diagnostics.js';
import { attrLoc, ElementReader } from './element-reader.js';
import type { XmlElement } from './xml-element.js';

/** `<tag name value>`: a key=value on each run; `value` is a template over the inputs. */
export interface TagDecl {
  name: string;
  value: string;
  loc: SourceLocation;
}

/** `<concurrency key limit>`: at most `limit` runs of the directive at once per rendered key. */
export interface ConcurrencyDecl {
  key: string;
  limit: number;
  loc: SourceLocation;
}

/** What a directive asks of its runs as a whole. */
export interface RunSettings {
  tags: TagDecl[];
  /** 1 to 10, higher first; undefined: the default. */
  priority: number | undefined;
  concurrency: ConcurrencyDecl | undefined;
  /**
   * `<retention days>`: how long the directive's runs are kept once ended, in seconds (the days
   * written, decimals allowed, times 86,400); undefined: the project's retention.
   */
  retentionSeconds: number | undefined;
}

/** The settings of a directive that declares none. */
export function noRunSettings(): RunSettings {
  return { tags: [], priority: undefined, concurrency: undefined, retentionSeconds: undefined };
}

/** The elements of `<metadata>` that are run settings. */
export const RUN_SETTING_TAGS = ['tag', 'priority', 'concurrency', 'retention'] as const;

/** Seconds in a day: `<retention days>` counts in days. */
const DAY_SECONDS = 86_400;

/**
 * The longest retention a directive may ask, in days (about 100 years): beyond it a number is a
 * typo, and Redis expiries are capped.
 */
export const MAX_RETENTION_DAYS = 36_500;

/** Priorities run from 1 to 10. */
export const PRIORITY_RANGE = { min: 1, max: 10 } as const;

/** What a tag's name may be: a word, dots and dashes allowed (`customer`, `order.region`). */
export const TAG_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,62}$/;
/** The longest a tag's value may be written, in characters. */
export const MAX_TAG_VALUE = 256;
/** The most tags a directive declares. */
export const MAX_TAGS = 32;

/** Reads one run setting element of `<metadata>` into `into`, reporting what is wrong. */
export function readRunSetting(el: XmlElement, into: RunSettings, diag: Diagnostics): void {
  switch (el.tag) {
    case 'tag':
      return readTag(el, into, diag);
    case 'priority': {
      const r = new ElementReader(el, diag, ['value'], ['value']);
      if (into.priority !== undefined) return twice(el, diag, 'priority');
      const raw = r.str('value');
      const n = Number(raw);
      if (raw === undefined || raw.trim() === '') return;
      if (!Number.isInteger(n) || n < PRIORITY_RANGE.min || n > PRIORITY_RANGE.max) {
        diag.error(
          ErrorCode.INVALID_ATTRIBUTE,
          `<priority value="${raw}">: a priority is a whole number from ${PRIORITY_RANGE.min} to ${PRIORITY_RANGE.max}.`,
          attrLoc(el, 'value'),
          'Write <priority value="5"/>; higher starts first when workers are busy.',
        );
        return;
      }
      into.priority = n;
      return;
    }
    case 'concurrency': {
      const r = new ElementReader(el, diag, ['key', 'limit'], ['key', 'limit']);
      if (into.concurrency !== undefined) return twice(el, diag, 'concurrency');
      const key = r.str('key');
      const limit = r.int('limit', 1);
      if (key === undefined || key.trim() === '' || limit === undefined) return;
      into.concurrency = { key, limit, loc: el.loc };
      return;
    }
    case 'retention':
      return readRetention(el, into, diag);
  }
}

/** `<retention days="30"/>`: a positive number of days, decimals allowed (`0.5` is 12 hours). */
function readRetention(el: XmlElement, into: RunSettings, diag: Diagnostics): void {
  const r = new ElementReader(el, diag, ['days'], ['days']);
  if (into.retentionSeconds !== undefined) return twice(el, diag, 'retention');
  const raw = r.str('days');
  if (raw === undefined || raw.trim() === '') return; // reported as missing
  const days = Number(raw);
  // At least a second, so that a run is kept at all: Redis expires in whole seconds.
  if (!Number.isFinite(days) || days * DAY_SECONDS < 1 || days > MAX_RETENTION_DAYS) {
    diag.error(
      ErrorCode.INVALID_ATTRIBUTE,
      `<retention days="${raw}">: a retention is a positive number of days (decimals allowed), at least a second (0.000012) and at most ${MAX_RETENTION_DAYS}.`,
      attrLoc(el, 'days'),
      'Write <retention days="30"/> to keep ended runs 30 days, or <retention days="0.5"/> for 12 hours.',
    );
    return;
  }
  into.retentionSeconds = days * DAY_SECONDS;
}

function readTag(el: XmlElement, into: RunSettings, diag: Diagnostics): void {
  const r = new ElementReader(el, diag, ['name', 'value'], ['name', 'value']);
  const name = r.str('name');
  const value = r.str('value');
  if (name === undefined || name === '' || value === undefined || value.trim() === '') return;
  if (!TAG_NAME.test(name)) {
    diag.error(
      ErrorCode.INVALID_NAME,
      `<tag name="${name}">: a tag's name starts with a letter and holds letters, digits, "_", "." and "-" (at most 63).`,
      attrLoc(el, 'name'),
      'Name it for what it holds, e.g. <tag name="customer" value="${inputs.customer}"/>.',
    );
    return;
  }
  if (into.tags.some((t) => t.name === name)) return twice(el, diag, `tag "${name}"`);
  if (value.length > MAX_TAG_VALUE) {
    diag.error(
      ErrorCode.INVALID_ATTRIBUTE,
      `<tag name="${name}">: its value is ${value.length} characters long, more than ${MAX_TAG_VALUE}.`,
      attrLoc(el, 'value'),
      "A tag names a run (a customer, an order): keep it short; put data in the run's inputs.",
    );
    return;
  }
  if (into.tags.length === MAX_TAGS) {
    diag.error(
      ErrorCode.INVALID_ATTRIBUTE,
      `<tag name="${name}">: a directive declares at most ${MAX_TAGS} tags.`,
      el.loc,
      'Keep the tags that runs are searched by.',
    );
    return;
  }
  into.tags.push({ name, value, loc: el.loc });
}

function twice(el: XmlElement, diag: Diagnostics, what: string): void {
  diag.error(
    ErrorCode.DUPLICATE_SETTING,
    `<metadata> sets the ${what} twice.`,
    el.loc,
    'Keep one of them.',
  );
}

/**
 * Checks what the run settings read: the inputs only, and only declared ones (they are settled
 * when the run starts, before state or steps exist).
 */
export function checkRunSettings(
  settings: RunSettings,
  inputs: readonly { name: string }[],
  diag: Diagnostics,
): void {
  const templates: [string, string, SourceLocation][] = [
    ...settings.tags.map((t): [string, string, SourceLocation] => [
      `<tag name="${t.name}">`,
      t.value,
      t.loc,
    ]),
    ...(settings.concurrency
      ? [
          ['<concurrency key>', settings.concurrency.key, settings.concurrency.loc] as [
            string,
            string,
            SourceLocation,
          ],
        ]
      : []),
  ];
  const declared = inputs.map((i) => i.name);
  for (const [what, source, loc] of templates) {
    let refs;
    try {
      refs = compileTemplate(source).refs;
    } catch (err) {
      if (!(err instanceof DirigentError)) throw err;
      diag.error(err.code, `${what}: ${err.message}`, loc, err.hint);
      continue;
    }
    for (const ref of refs) {
      const head = ref.path[0] ?? '';
      if (ref.root !== 'inputs' && ref.root !== 'input') {
        diag.error(
          ErrorCode.UNKNOWN_TEMPLATE_PATH,
          `${what}: ${ref.raw} reads ${ref.root}, but a run setting is settled when the run starts, from its inputs only.`,
          loc,
          'Read an input (${inputs.name}); declare one for what the setting needs.',
        );
      } else if (head !== '' && !declared.includes(head)) {
        diag.error(
          ErrorCode.UNKNOWN_TEMPLATE_PATH,
          `${what}: ${ref.raw}: no input named "${head}" is declared.${didYouMean(head, declared)}`,
          loc,
          `Declare it with <input name="${head}" …> or fix the name; declared: ${declared.join(', ') || 'none'}.`,
        );
      }
    }
  }
}

/** What a search asks for, and the checked form the index and the plain scan both run. */
import { Range } from 'semver';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SignatureState } from '../items/item-catalog.js';
import type { ItemKind } from '../items/item-kind.js';
import type { SpaceName } from '../items/space.js';
import { parseQuery } from './parse-query.js';
import type { QueryNode } from './query-node.js';

/** How results are ordered. */
export type SearchSort = 'score' | 'date' | 'name';

/** A search: a query and filters, all optional (an empty request lists every item). */
export interface SearchRequest {
  /** In the query language of {@link parseQuery}; empty or absent matches every item. */
  query?: string;
  kinds?: ItemKind[];
  spaces?: SpaceName[];
  /** The category, or a prefix of it in whole segments (`a/b` matches `a/b` and `a/b/c`). */
  category?: string;
  /** Tags the item must all have (compared without regard to case). */
  tags?: string[];
  /** A semver range (`^1.2`, `>=2 <3`) the item's version must satisfy. */
  version?: string;
  /**
   * ISO dates (`2025-01-31`, or with a time) bounding the item's date, both included: its
   * `createdAt`, else its `updatedAt`, else when its file last changed. A date alone as `dateTo`
   * takes in the whole day.
   */
  dateFrom?: string;
  dateTo?: string;
  signature?: SignatureState[];
  /** Whether items hidden by an item of the same kind and id in a higher space are listed (marked `shadowed`). Default true. */
  includeShadowed?: boolean;
  /**
   * `score` (default): best match first, then project before user before system, then item id;
   * `date`: newest first; `name`: by name, ignoring case.
   */
  sort?: SearchSort;
  /** Results per page, 1 to 100; default 10. */
  limit?: number;
  /** Results skipped before the page; default 0. */
  offset?: number;
}

/** The default and the largest {@link SearchRequest.limit}. */
export const SEARCH_LIMITS = { default: 10, max: 100 } as const;

/** A {@link SearchRequest} checked, parsed and with its defaults. */
export interface CheckedSearch {
  query: string;
  tree: QueryNode;
  kinds?: ReadonlySet<ItemKind>;
  spaces?: ReadonlySet<SpaceName>;
  /** Lowercased, without a trailing `/`. */
  category?: string;
  /** Lowercased. */
  tags: string[];
  version?: Range;
  /** Epoch ms, both included. */
  dateFrom?: number;
  dateTo?: number;
  signature?: ReadonlySet<SignatureState>;
  includeShadowed: boolean;
  sort: SearchSort;
  limit: number;
  offset: number;
}

const KINDS: readonly ItemKind[] = ['directive', 'tool', 'knowledge'];
const SPACES: readonly SpaceName[] = ['project', 'user', 'system'];
const STATES: readonly SignatureState[] = [
  'verified',
  'untrusted',
  'unsigned',
  'tampered',
  'forged',
  'builtin',
];
const SORTS: readonly SearchSort[] = ['score', 'date', 'name'];
const ISO_DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const DAY_MS = 86_400_000;

/**
 * Checks a request and parses its query. Throws `INVALID_QUERY` for a malformed query (see
 * {@link parseQuery}) and `INVALID_REQUEST`, with a hint, for an unknown kind, space, signature
 * state or sort, a bad version range or date, `dateFrom` after `dateTo`, or a limit or offset out
 * of range.
 */
export function checkSearchRequest(request: SearchRequest): CheckedSearch {
  const query = request.query ?? '';
  if (typeof query !== 'string')
    throw invalid('query', 'is not a string', 'Give the query as text, e.g. "deploy OR release".');
  const checked: CheckedSearch = {
    query,
    tree: parseQuery(query),
    tags: stringList('tags', request.tags).map((t) => t.toLowerCase()),
    includeShadowed: request.includeShadowed ?? true,
    sort: oneOf('sort', request.sort ?? 'score', SORTS),
    limit: integer('limit', request.limit ?? SEARCH_LIMITS.default, 1, SEARCH_LIMITS.max),
    offset: integer('offset', request.offset ?? 0, 0, Number.MAX_SAFE_INTEGER),
  };
  if (request.kinds !== undefined) checked.kinds = setOf('kinds', request.kinds, KINDS);
  if (request.spaces !== undefined) checked.spaces = setOf('spaces', request.spaces, SPACES);
  if (request.signature !== undefined)
    checked.signature = setOf('signature', request.signature, STATES);
  if (request.category !== undefined) {
    if (typeof request.category !== 'string')
      throw invalid('category', 'is not a string', 'Give a category such as "rye/core".');
    const category = request.category.trim().replace(/\/+$/, '').toLowerCase();
    if (category !== '') checked.category = category;
  }
  if (request.version !== undefined) {
    let range: Range | undefined;
    try {
      if (typeof request.version === 'string') range = new Range(request.version);
    } catch {
      // not a range: refused below
    }
    if (range === undefined)
      throw invalid(
        'version',
        `"${String(request.version)}" is not a semver range`,
        'Give a range such as "1.2.3", "^1.2", "~2.0", ">=1.0.0 <2.0.0" or "1.x".',
      );
    checked.version = range;
  }
  if (request.dateFrom !== undefined) checked.dateFrom = isoDate('dateFrom', request.dateFrom);
  if (request.dateTo !== undefined) checked.dateTo = isoDate('dateTo', request.dateTo, true);
  if (
    checked.dateFrom !== undefined &&
    checked.dateTo !== undefined &&
    checked.dateFrom > checked.dateTo
  )
    throw invalid(
      'dateFrom',
      `(${request.dateFrom}) is after dateTo (${request.dateTo})`,
      'Give dateFrom on or before dateTo, or only one of them.',
    );
  if (request.includeShadowed !== undefined && typeof request.includeShadowed !== 'boolean')
    throw invalid('includeShadowed', 'is not true or false', 'Give true or false.');
  return checked;
}

function invalid(name: string, what: string, hint: string): DirigentError {
  return DirigentError.fatal(ErrorCode.INVALID_REQUEST, `Search request: ${name} ${what}.`, {
    hint,
    details: { parameter: name },
  });
}

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value))
    return value as T;
  throw invalid(
    name,
    `"${String(value)}" is not one of ${allowed.join(', ')}`,
    `Give one of ${allowed.join(', ')}.`,
  );
}

function setOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): Set<T> {
  if (!Array.isArray(value))
    throw invalid(name, 'is not a list', `Give a list of ${allowed.join(', ')}.`);
  return new Set(value.map((v) => oneOf(name, v, allowed)));
}

function stringList(name: string, value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    throw invalid(name, 'is not a list of strings', 'Give a list such as ["deploy", "aws"].');
  return value.map((v) => v.trim()).filter((v) => v !== '');
}

function integer(name: string, value: unknown, min: number, max: number): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max)
    return value;
  throw invalid(
    name,
    `${String(value)} is out of range`,
    max === Number.MAX_SAFE_INTEGER
      ? `Give a whole number from ${min}.`
      : `Give a whole number from ${min} to ${max}.`,
  );
}

/** Epoch ms of an ISO date; a date alone as an upper bound means the end of that day. */
function isoDate(name: string, value: unknown, endOfDay = false): number {
  const m = typeof value === 'string' ? ISO_DATE.exec(value.trim()) : null;
  const ms = m === null ? NaN : Date.parse(m[4] === undefined ? `${m[0]}T00:00:00Z` : m[0]);
  const [, y, mo, d] = m ?? [];
  const real =
    Number.isFinite(ms) &&
    (m?.[4] !== undefined ||
      new Date(ms).toISOString().slice(0, 10) === `${y ?? ''}-${mo ?? ''}-${d ?? ''}`);
  if (!real)
    throw invalid(
      name,
      `"${String(value)}" is not an ISO date`,
      'Give a date such as 2025-01-31 or 2025-01-31T12:00:00Z.',
    );
  return endOfDay && m?.[4] === undefined ? ms + DAY_MS - 1 : ms;
}

/**
 * The filters of a search (everything but the query), which read what they need of each item
 * from columns of numbers by document number ({@link FilterColumns}), so that testing thousands
 * of items is quick.
 */
import { coerce, valid, type SemVer } from 'semver';
import type { CatalogItem } from '../items/item-catalog.js';
import type { ItemKind } from '../items/item-kind.js';
import type { SpaceName } from '../items/space.js';
import type { CheckedSearch } from './search-request.js';

/**
 * An item's date for date filters and the `date` sort (epoch ms): its `createdAt`, else its
 * `updatedAt` (the first that parses as a date), else when its file last changed.
 */
export function itemDate(item: CatalogItem): number {
  for (const text of [item.createdAt, item.updatedAt]) {
    if (text === undefined) continue;
    const ms = Date.parse(text);
    if (Number.isFinite(ms)) return ms;
  }
  return item.modifiedAt;
}

/**
 * Kinds, spaces, signature states, categories and tags (lowercased) and versions, numbered:
 * every such string seen in this process gets a number once, so that the columns hold numbers
 * and a filter decides once per distinct string, not once per item.
 */
const names: string[] = [];
const numbers = new Map<string, number>();
/** Each name parsed (or coerced) as a semver version when first asked (`false`: not one). */
const semvers: (string | SemVer | false | undefined)[] = [];

function numberOf(name: string): number {
  let num = numbers.get(name);
  if (num === undefined) {
    num = names.length;
    names.push(name);
    numbers.set(name, num);
  }
  return num;
}

/**
 * What the filters read of each item, by number, in typed arrays (-1 for an absent value). A
 * filter made by {@link itemFilter} reads the arrays it was made with: set the items first.
 */
export class FilterColumns {
  kind: Int32Array;
  space: Int32Array;
  signature: Int32Array;
  shadowed: Uint8Array;
  category: Int32Array;
  version: Int32Array;
  date: Float64Array;
  /** Item `num`'s tags are `tagList[tagFrom[num]]` up to `tagList[tagTo[num]]` (exclusive). */
  tagFrom: Int32Array;
  tagTo: Int32Array;
  tagList = new Int32Array(64);
  private tagEnd = 0;

  /** Columns with room for `size` items (they grow as items are set). */
  constructor(size = 16) {
    this.kind = new Int32Array(size);
    this.space = new Int32Array(size);
    this.signature = new Int32Array(size);
    this.shadowed = new Uint8Array(size);
    this.category = new Int32Array(size);
    this.version = new Int32Array(size);
    this.date = new Float64Array(size);
    this.tagFrom = new Int32Array(size);
    this.tagTo = new Int32Array(size);
  }

  /** Puts what the filters read of `item` under `num`. */
  set(num: number, item: CatalogItem, date = itemDate(item)): void {
    if (num >= this.kind.length) this.grow(Math.max(num + 1, this.kind.length * 2, 16));
    this.kind[num] = numberOf(item.kind);
    this.space[num] = numberOf(item.space);
    this.signature[num] = numberOf(item.signature.state);
    this.shadowed[num] = item.shadowedBy === undefined ? 0 : 1;
    this.category[num] = item.category === undefined ? -1 : numberOf(item.category.toLowerCase());
    this.version[num] = item.version === undefined ? -1 : numberOf(item.version);
    this.date[num] = date;
    // In the place of the item's tags before when they fit, else at the end of the list.
    let at = this.tagTo[num]! - this.tagFrom[num]! >= item.tags.length ? this.tagFrom[num]! : -1;
    if (at < 0) {
      at = this.tagEnd;
      this.tagEnd += item.tags.length;
      if (this.tagEnd > this.tagList.length) {
        const list = new Int32Array(Math.max(this.tagEnd, this.tagList.length * 2));
        list.set(this.tagList);
        this.tagList = list;
      }
    }
    this.tagFrom[num] = at;
    for (const tag of item.tags) this.tagList[at++] = numberOf(tag.toLowerCase());
    this.tagTo[num] = at;
  }

  private grow(size: number): void {
    const grow = <T extends Int32Array | Uint8Array | Float64Array>(a: T): T => {
      const copy = new (a.constructor as new (n: number) => T)(size);
      copy.set(a);
      return copy;
    };
    this.kind = grow(this.kind);
    this.space = grow(this.space);
    this.signature = grow(this.signature);
    this.shadowed = grow(this.shadowed);
    this.category = grow(this.category);
    this.version = grow(this.version);
    this.date = grow(this.date);
    this.tagFrom = grow(this.tagFrom);
    this.tagTo = grow(this.tagTo);
  }
}

/**
 * The filters of `search` (kinds, spaces, category, tags, version, dates, signature,
 * shadowing) as one test of an item by its number in `columns`, or `undefined` when it has
 * none.
 */
export function itemFilter(
  search: CheckedSearch,
  columns: FilterColumns,
): ((num: number) => boolean) | undefined {
  const { kinds, spaces, signature, category, tags, version: range, dateFrom, dateTo } = search;
  if (
    kinds === undefined &&
    spaces === undefined &&
    search.includeShadowed &&
    signature === undefined &&
    category === undefined &&
    tags.length === 0 &&
    range === undefined &&
    dateFrom === undefined &&
    dateTo === undefined
  )
    return undefined;
  const kindOk = kinds && verdicts((name) => kinds.has(name as ItemKind));
  const spaceOk = spaces && verdicts((name) => spaces.has(name as SpaceName));
  const signatureOk = signature && verdicts((name) => signature.has(name as never));
  const subcategory = `${category}/`;
  const categoryOk =
    category !== undefined && verdicts((name) => name === category || name.startsWith(subcategory));
  const versionOk =
    range !== undefined &&
    verdicts((name, num) => {
      const parsed = (semvers[num] ??= valid(name) ?? coerce(name) ?? false);
      return parsed !== false && range.test(parsed);
    });
  const wantedTags = tags.map(numberOf);
  const { kind, space, shadowed, category: categories, version, date } = columns;
  const signatures = columns.signature;
  return (num) => {
    if (kindOk && !kindOk(kind[num]!)) return false;
    if (spaceOk && !spaceOk(space[num]!)) return false;
    if (!search.includeShadowed && shadowed[num] === 1) return false;
    if (signatureOk && !signatureOk(signatures[num]!)) return false;
    if (categoryOk && (categories[num]! < 0 || !categoryOk(categories[num]!))) return false;
    if (wantedTags.length > 0) {
      const { tagList, tagFrom, tagTo } = columns;
      for (const tag of wantedTags) {
        let i = tagFrom[num]!;
        const end = tagTo[num]!;
        while (i < end && tagList[i] !== tag) i++;
        if (i === end) return false;
      }
    }
    if (versionOk && (version[num]! < 0 || !versionOk(version[num]!))) return false;
    if (dateFrom !== undefined && date[num]! < dateFrom) return false;
    if (dateTo !== undefined && date[num]! > dateTo) return false;
    return true;
  };
}

/**
 * `test` of a numbered name, decided once per name (names numbered after this is made, while a
 * scan numbers the items it reads, are tested each time).
 */
function verdicts(test: (name: string, num: number) => boolean): (num: number) => boolean {
  const known = new Int8Array(names.length);
  return (num) => {
    if (num >= known.length) return test(names[num]!, num);
    let verdict = known[num]!;
    if (verdict === 0) known[num] = verdict = test(names[num]!, num) ? 1 : -1;
    return verdict === 1;
  };
}

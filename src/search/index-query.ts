/**
 * Runs a parsed query on a {@link TermIndex}: each word is looked up (with the words it stands
 * for by prefix or by typo, see `word-hits.ts`), its postings scored with BM25+ (see `bm25.ts`)
 * into a dense accumulator over the document numbers, and the nodes of the query combined as sets
 * of document numbers: `and` and `or` add their children's scores up; `not` and `*` score
 * nothing.
 */
import { finalScore } from './bm25.js';
import { Hits, keepHits } from './hits.js';
import { phraseHits } from './phrase-hits.js';
import type { QueryNode } from './query-node.js';
import { QueryScratch } from './query-scratch.js';
import { SEARCH_FIELDS } from './search-fields.js';
import { fuzzyDistance, phraseText } from './search-words.js';
import type { TermIndex } from './term-index.js';
import { wordHits } from './word-hits.js';

export { finalScore, Hits };

const ALL_FIELDS: readonly number[] = SEARCH_FIELDS.map((_, f) => f);

/**
 * Query evaluation over one {@link TermIndex}, with scratch arrays kept from one query to the next
 * (see {@link QueryScratch}), so that a query allocates next to nothing.
 */
export class IndexQuery {
  private readonly scratch: QueryScratch;

  constructor(index: TermIndex) {
    this.scratch = new QueryScratch(index);
  }

  /** The documents matching `tree` (valid until the next call). */
  run(tree: QueryNode): Hits {
    this.scratch.begin();
    return this.node(tree);
  }

  /**
   * Sizes the scratch arrays and the pool to the index's document and term numbers: after the
   * index changed, before the next query (which then allocates next to nothing).
   */
  prepare(): void {
    this.scratch.prepare();
  }

  /** The documents matching `node`, scored. */
  private node(node: QueryNode): Hits {
    switch (node.type) {
      case 'all':
        return this.all();
      case 'not':
        return this.without(this.all(), [this.node(node.child)]);
      case 'or':
        return this.union(node.children.map((c) => this.node(c)));
      case 'and': {
        const wanted: Hits[] = [];
        const unwanted: Hits[] = [];
        for (const child of node.children) {
          if (child.type === 'not') unwanted.push(this.node(child.child));
          else wanted.push(this.node(child));
        }
        const base = wanted.length === 0 ? this.all() : this.intersection(wanted);
        return unwanted.length === 0 ? base : this.without(base, unwanted);
      }
      case 'term': {
        const fields = fieldsOf(node.field);
        const last = node.words.length - 1;
        return this.intersection(
          node.words.map((w, i) =>
            wordHits(
              this.scratch,
              w,
              fields,
              node.prefix && i === last ? 'prefix' : fuzzyDistance(w) > 0 ? 'fuzzy' : 'exact',
            ),
          ),
        );
      }
      case 'phrase': {
        const fields = fieldsOf(node.field);
        const wanted = phraseText(node.text);
        if (node.words.length > 1) return phraseHits(this.scratch, node.words, wanted, fields);
        // One word: the documents with it, and when the phrase has more than the word
        // (`"(old"`), those whose text has that.
        const found = wordHits(this.scratch, node.words[0]!, fields, 'exact');
        if (found.size === 0 || wanted === node.words[0]) return found;
        return keepHits(found, (d) =>
          fields.some((f) =>
            this.scratch.index.phrases(d, f).some((text) => text.includes(wanted)),
          ),
        );
      }
    }
  }

  /** Every live document, scoring nothing. */
  private all(): Hits {
    const { alive, ids } = this.scratch.index;
    const out = this.scratch.take();
    let n = 0;
    for (let d = 0; d < ids.length; d++) {
      if (alive[d] === 0) continue;
      out.docs[n] = d;
      out.scores[n] = 0;
      out.words[n++] = 0;
    }
    out.size = n;
    return out;
  }

  /** The documents in every one of `sets`, their scores added up. */
  private intersection(sets: Hits[]): Hits {
    if (sets.length === 1) return sets[0]!;
    let smallest = sets[0]!;
    for (const s of sets) if (s.size < smallest.size) smallest = s;
    if (smallest.size === 0) return smallest;
    const epoch = this.scratch.nextEpoch();
    const { stamps, counts, acc, accWords } = this.scratch;
    for (let i = 0; i < smallest.size; i++) {
      const d = smallest.docs[i]!;
      stamps[d] = epoch;
      counts[d] = 0;
      acc[d] = 0;
      accWords[d] = 0;
    }
    for (const { docs, scores, words, size } of sets) {
      for (let i = 0; i < size; i++) {
        const d = docs[i]!;
        if (stamps[d] !== epoch) continue;
        counts[d]!++;
        acc[d] = acc[d]! + scores[i]!;
        accWords[d]! |= words[i]!;
      }
    }
    const out = this.scratch.take();
    let n = 0;
    for (let i = 0; i < smallest.size; i++) {
      const d = smallest.docs[i]!;
      if (counts[d] !== sets.length) continue;
      out.docs[n] = d;
      out.scores[n] = acc[d]!;
      out.words[n++] = accWords[d]!;
    }
    out.size = n;
    return out;
  }

  /** The documents in any of `sets`, their scores added up. */
  private union(sets: Hits[]): Hits {
    const epoch = this.scratch.nextEpoch();
    const { stamps, acc, accWords, touched } = this.scratch;
    let n = 0;
    for (const { docs, scores, words, size } of sets) {
      for (let i = 0; i < size; i++) {
        const d = docs[i]!;
        if (stamps[d] !== epoch) {
          stamps[d] = epoch;
          acc[d] = scores[i]!;
          accWords[d] = words[i]!;
          touched[n++] = d;
        } else {
          acc[d] = acc[d]! + scores[i]!;
          accWords[d]! |= words[i]!;
        }
      }
    }
    const out = this.scratch.take();
    for (let i = 0; i < n; i++) {
      const d = touched[i]!;
      out.docs[i] = d;
      out.scores[i] = acc[d]!;
      out.words[i] = accWords[d]!;
    }
    out.size = n;
    return out;
  }

  /** The documents of `base` in none of `unwanted` (`base` itself, made smaller). */
  private without(base: Hits, unwanted: Hits[]): Hits {
    const epoch = this.scratch.nextEpoch();
    const stamps = this.scratch.stamps;
    for (const { docs, size } of unwanted) for (let i = 0; i < size; i++) stamps[docs[i]!] = epoch;
    return keepHits(base, (d) => stamps[d] !== epoch);
  }
}

/** The numbers of the fields a term searches: `field` alone, or every field. */
function fieldsOf(field: string | undefined): readonly number[] {
  return field === undefined ? ALL_FIELDS : [SEARCH_FIELDS.indexOf(field as never)];
}

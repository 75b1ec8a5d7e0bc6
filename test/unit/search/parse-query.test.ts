import { describe, expect, it } from 'vitest';
import { DirigentError } from '../../../src/errors/dirigent-error.js';
import { ErrorCode } from '../../../src/errors/error-codes.js';
import { parseQuery } from '../../../src/search/parse-query.js';
import type { QueryNode } from '../../../src/search/query-node.js';

/** The tree without columns and term texts: what the query means. */
function shape(node: QueryNode): unknown {
  switch (node.type) {
    case 'all':
      return '*';
    case 'term':
      return `${node.field ? `${node.field}:` : ''}${node.words.join('+')}${node.prefix ? '*' : ''}`;
    case 'phrase':
      return `${node.field ? `${node.field}:` : ''}"${node.words.join(' ')}"`;
    case 'not':
      return { not: shape(node.child) };
    default:
      return { [node.type]: node.children.map(shape) };
  }
}
const meaning = (query: string) => shape(parseQuery(query));

function failure(query: string): DirigentError {
  try {
    parseQuery(query);
  } catch (err) {
    expect(err).toBeInstanceOf(DirigentError);
    return err as DirigentError;
  }
  throw new Error(`"${query}" parsed`);
}

describe('parseQuery', () => {
  describe('terms', () => {
    it('reads the empty query, and one of spaces only, as everything', () => {
      expect(parseQuery('')).toEqual({ type: 'all' });
      expect(parseQuery('  \t ')).toEqual({ type: 'all' });
    });

    it('reads a word as a term, lowercased, with the column it starts at', () => {
      expect(parseQuery('  Deploy')).toEqual({
        type: 'term',
        text: 'Deploy',
        words: ['deploy'],
        prefix: false,
        column: 3,
      });
    });

    it('splits a term written with punctuation into its words, all of which must match', () => {
      expect(meaning('rye/core.bash')).toBe('rye+core+bash');
    });

    it('reads a trailing * as a prefix and * alone as everything', () => {
      expect(meaning('deplo*')).toBe('deplo*');
      expect(meaning('*')).toBe('*');
      expect(meaning('deploy *')).toBe('deploy');
      expect(meaning('deploy OR *')).toBe('*');
    });
  });

  describe('operators', () => {
    it('ANDs words written one after the other', () => {
      expect(meaning('deploy app prod')).toEqual({ and: ['deploy', 'app', 'prod'] });
    });

    it('reads AND, OR and NOT in any case as operators', () => {
      expect(meaning('a1 and b1')).toEqual({ and: ['a1', 'b1'] });
      expect(meaning('a1 Or b1')).toEqual({ or: ['a1', 'b1'] });
      expect(meaning('not a1')).toEqual({ not: 'a1' });
    });

    it('reads a leading - as NOT, before a word, a phrase or a group', () => {
      expect(meaning('deploy -staging')).toEqual({ and: ['deploy', { not: 'staging' }] });
      expect(meaning('-"dry run"')).toEqual({ not: '"dry run"' });
      expect(meaning('-(a1 b1)')).toEqual({ not: { and: ['a1', 'b1'] } });
      expect(meaning('pre-release')).toBe('pre+release');
    });

    it('binds NOT tighter than AND, and AND tighter than OR', () => {
      expect(meaning('a1 b1 OR c1 NOT d1')).toEqual({
        or: [{ and: ['a1', 'b1'] }, { and: ['c1', { not: 'd1' }] }],
      });
      expect(meaning('a1 OR b1 AND c1')).toEqual({ or: ['a1', { and: ['b1', 'c1'] }] });
      expect(meaning('NOT a1 OR b1')).toEqual({ or: [{ not: 'a1' }, 'b1'] });
    });

    it('groups with parentheses, and flattens what they do not change', () => {
      expect(meaning('(a1 OR b1) c1')).toEqual({ and: [{ or: ['a1', 'b1'] }, 'c1'] });
      expect(meaning('a1 (b1 c1)')).toEqual({ and: ['a1', 'b1', 'c1'] });
      expect(meaning('((a1))')).toBe('a1');
      expect(meaning('NOT NOT a1')).toBe('a1');
    });
  });

  describe('phrases and fields', () => {
    it('reads a quoted phrase', () => {
      expect(parseQuery('x1 "Quick  Start"')).toEqual({
        type: 'and',
        children: [
          { type: 'term', text: 'x1', words: ['x1'], prefix: false, column: 1 },
          { type: 'phrase', text: 'Quick  Start', words: ['quick', 'start'], column: 4 },
        ],
      });
    });

    it('reads operator words inside a phrase as words', () => {
      expect(meaning('"cats AND dogs"')).toBe('"cats and dogs"');
    });

    it('reads field terms, phrases and prefixes for every field', () => {
      expect(meaning('name:deploy')).toBe('name:deploy');
      expect(meaning('title:"quick start"')).toBe('title:"quick start"');
      expect(meaning('description:depl*')).toBe('description:depl*');
      expect(meaning('category:rye/core')).toBe('category:rye+core');
      expect(meaning('tags:aws')).toBe('tags:aws');
      expect(meaning('tag:aws')).toBe('tags:aws');
      expect(meaning('content:bucket')).toBe('content:bucket');
      expect(meaning('id:ops/deploy')).toBe('id:ops+deploy');
      expect(meaning('NAME:Deploy')).toBe('name:deploy');
      expect(meaning('name:*')).toBe('*');
    });

    it('reads a colon after something other than letters as part of a word', () => {
      expect(meaning('12:30')).toBe('12+30');
    });
  });

  describe('malformed queries', () => {
    it.each([
      ['(deploy', 1, 'never closed'],
      ['deploy (a1 OR (b1)', 8, 'never closed'],
      ['deploy)', 7, 'closes nothing'],
      ['()', 1, 'empty parentheses'],
      ['"deploy app', 1, 'quote is never closed'],
      ['x1 ""', 4, 'empty phrase'],
      ['deploy AND', 8, 'AND has nothing after it'],
      ['deploy OR', 8, 'OR has nothing after it'],
      ['OR deploy', 1, 'OR has nothing before it'],
      ['a1 AND OR b1', 4, 'AND has nothing after it'],
      ['a1 NOT', 4, 'NOT has nothing after it'],
      ['(a1 OR) b1', 5, 'OR has nothing after it'],
      ['de*ploy', 3, 'may only end a word'],
      ['name:de*p*', 8, 'may only end a word'],
      ['a1 &&', 4, 'no letter or digit'],
      ['name:', 1, 'no term after it'],
      ['size:big', 1, 'unknown field "size:"'],
    ])('%j fails at column %i (%s)', (query, column, what) => {
      const err = failure(query);
      expect(err.code).toBe(ErrorCode.INVALID_QUERY);
      expect(err.message).toContain(`column ${column}`);
      expect(err.message).toContain(what);
      expect(err.details).toEqual({ query, column });
      expect(err.hint).toMatch(/^Query syntax: .*field:term/);
    });

    it('suggests the field meant by a near miss', () => {
      expect(failure('tilte:deploy').hint).toMatch(/^Did you mean "title"\?/);
    });
  });
});

/**
 * The search query language (RYE's, with field terms and prefixes):
 * - words, all of which must match (`deploy app`); `AND`, `OR`, `NOT` (any case) between them,
 *   `-word` for `NOT word`, and parentheses; `NOT` binds tightest, then `AND`, then `OR`;
 * - `"a quoted phrase"`: its words, together and in that order;
 * - `deplo*`: any word that begins so; `*` alone: everything (as is the empty query);
 * - `field:term`, `field:"a phrase"`, `field:prefix*` for the fields `name`, `title`,
 *   `description`, `category`, `tags` (or `tag`), `content` and `id`.
 * Pure: no I/O.
 */
import { didYouMean } from '../errors/did-you-mean.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { QUERY_FIELDS, type QueryField, type QueryNode } from './query-node.js';
import { searchWords } from './search-words.js';

/** What the hint of every malformed query shows. */
export const QUERY_SYNTAX_HINT =
  'Query syntax: words that must all match (deploy app), OR, AND, NOT or -word, ( ), ' +
  '"a phrase", a prefix* (or * for everything), and field:term with the fields ' +
  'name, title, description, category, tags, content, id (e.g. tags:deploy, title:"quick start"); ' +
  'quote a word that contains a colon or is AND/OR/NOT.';

type Token =
  | { kind: '(' | ')' | 'AND' | 'OR' | 'NOT'; column: number; text: string }
  | { kind: 'leaf'; node: QueryNode; column: number; text: string };

/**
 * Parses a query into a {@link QueryNode} tree (the empty query is `{type: 'all'}`). Throws
 * `INVALID_QUERY`, with the column (1-based) in the message and in `details.column`, for
 * unbalanced parentheses or quotes, an operator with nothing on one side, an empty phrase or
 * group, a `*` anywhere but at the end of a word, a term with no letter or digit, or an unknown
 * field.
 */
export function parseQuery(text: string): QueryNode {
  const tokens = lex(text);
  if (tokens.length === 0) return { type: 'all' };
  let p = 0;
  const peek = (): Token | undefined => tokens[p];
  const fail = (what: string, column: number): never => {
    throw invalidQuery(text, what, column);
  };
  const endColumn = text.length + 1;
  const startsOperand = (t: Token | undefined) =>
    t !== undefined && (t.kind === 'leaf' || t.kind === '(' || t.kind === 'NOT');
  const needOperand = (op: Token): void => {
    if (!startsOperand(peek())) fail(`${op.text} has nothing after it`, op.column);
  };

  const parseOr = (): QueryNode => {
    const children = [parseAnd()];
    while (peek()?.kind === 'OR') {
      const op = tokens[p++]!;
      needOperand(op);
      children.push(parseAnd());
    }
    return combine('or', children);
  };
  const parseAnd = (): QueryNode => {
    const children = [parseUnary()];
    for (;;) {
      const next = peek();
      if (next?.kind === 'AND') {
        p++;
        needOperand(next);
      } else if (!startsOperand(next)) break;
      children.push(parseUnary());
    }
    return combine('and', children);
  };
  const parseUnary = (): QueryNode => {
    const t = peek();
    if (t?.kind !== 'NOT') return parsePrimary();
    p++;
    needOperand(t);
    const child = parseUnary();
    return child.type === 'not' ? child.child : { type: 'not', child };
  };
  const parsePrimary = (): QueryNode => {
    const t = peek();
    if (t === undefined) return fail('the query ends where a term was expected', endColumn);
    if (t.kind === 'leaf') {
      p++;
      return t.node;
    }
    if (t.kind === '(') {
      p++;
      if (peek()?.kind === ')') fail('empty parentheses', t.column);
      const inner = parseOr();
      if (peek()?.kind !== ')') fail('this ( is never closed', t.column);
      p++;
      return inner;
    }
    if (t.kind === ')') return fail('this ) closes nothing', t.column);
    return fail(`${t.text} has nothing before it`, t.column);
  };

  const node = parseOr();
  const rest = peek();
  if (rest !== undefined)
    fail(rest.kind === ')' ? 'this ) closes nothing' : 'unexpected', rest.column);
  return node;
}

/** Flattens nested `and`s (or `or`s) and drops what cannot change the result. */
function combine(type: 'and' | 'or', nodes: QueryNode[]): QueryNode {
  const flat = nodes.flatMap((n) => (n.type === type ? n.children : [n]));
  if (type === 'or' && flat.some((n) => n.type === 'all')) return { type: 'all' };
  const children = type === 'and' ? flat.filter((n) => n.type !== 'all') : flat;
  if (children.length === 0) return { type: 'all' };
  return children.length === 1 ? children[0]! : { type, children };
}

const FIELD_NAMES: Record<string, QueryField> = {
  ...Object.fromEntries(QUERY_FIELDS.map((f) => [f, f])),
  tag: 'tags',
};

function lex(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const fail = (what: string, index: number): never => {
    throw invalidQuery(text, what, index + 1);
  };
  const isSpace = (c: string | undefined) => c !== undefined && /\s/.test(c);
  /** A quoted phrase starting at `i` (on its opening quote); returns it and moves past it. */
  const phrase = (field: QueryField | undefined, start: number): QueryNode => {
    const close = text.indexOf('"', i + 1);
    if (close === -1) fail('this quote is never closed', i);
    const inner = text.slice(i + 1, close);
    i = close + 1;
    const words = searchWords(inner);
    if (words.length === 0)
      fail(inner.trim() === '' ? 'empty phrase' : 'the phrase has no letter or digit', start);
    return {
      type: 'phrase',
      text: inner,
      words,
      ...(field !== undefined && { field }),
      column: start + 1,
    };
  };

  while (i < text.length) {
    const c = text[i]!;
    if (isSpace(c)) {
      i++;
      continue;
    }
    const start = i;
    if (c === '(' || c === ')') {
      tokens.push({ kind: c, column: start + 1, text: c });
      i++;
      continue;
    }
    if (c === '"') {
      tokens.push({ kind: 'leaf', node: phrase(undefined, start), column: start + 1, text: '"' });
      continue;
    }
    const next = text[i + 1];
    if (c === '-' && next !== undefined && !isSpace(next) && next !== ')') {
      tokens.push({ kind: 'NOT', column: start + 1, text: '-' });
      i++;
      continue;
    }
    while (i < text.length && !isSpace(text[i]) && !'()"'.includes(text[i]!)) i++;
    const word = text.slice(start, i);
    const upper = word.toUpperCase();
    if (upper === 'AND' || upper === 'OR' || upper === 'NOT') {
      tokens.push({ kind: upper, column: start + 1, text: word });
      continue;
    }
    const fieldMatch = /^([A-Za-z_]+):/.exec(word);
    let field: QueryField | undefined;
    let term = word;
    if (fieldMatch !== null) {
      const name = fieldMatch[1]!;
      field = FIELD_NAMES[name.toLowerCase()];
      if (field === undefined) {
        const guess = didYouMean(name, Object.keys(FIELD_NAMES)).trim();
        throw invalidQuery(
          text,
          `unknown field "${name}:" (quote the word to search for it as written)`,
          start + 1,
          guess,
        );
      }
      term = word.slice(fieldMatch[0].length);
      if (term === '') {
        if (text[i] !== '"') fail(`the field ${name}: has no term after it`, start);
        tokens.push({ kind: 'leaf', node: phrase(field, start), column: start + 1, text: word });
        continue;
      }
    }
    const node = termNode(term, field, start, i - term.length);
    tokens.push({ kind: 'leaf', node, column: start + 1, text: word });
  }
  return tokens;

  /** The node of a term starting at `start` (its field included), its text at `termStart`. */
  function termNode(
    term: string,
    field: QueryField | undefined,
    start: number,
    termStart: number,
  ): QueryNode {
    if (term === '*') return { type: 'all' };
    const prefix = term.endsWith('*');
    const body = prefix ? term.slice(0, -1) : term;
    const star = body.indexOf('*');
    if (star !== -1) fail('a * may only end a word (a prefix search)', termStart + star);
    const words = searchWords(body);
    if (words.length === 0) fail(`"${term}" has no letter or digit to search for`, start);
    return {
      type: 'term',
      text: body,
      words,
      prefix,
      ...(field !== undefined && { field }),
      column: start + 1,
    };
  }
}

/** `INVALID_QUERY` for `what` at `column` (1-based), with the syntax as the hint. */
function invalidQuery(query: string, what: string, column: number, guess = ''): DirigentError {
  return DirigentError.fatal(
    ErrorCode.INVALID_QUERY,
    `Invalid search query at column ${column}: ${what}.`,
    {
      hint: guess === '' ? QUERY_SYNTAX_HINT : `${guess} ${QUERY_SYNTAX_HINT}`,
      details: { query, column },
    },
  );
}

/**
 * Templates in directive text (DIRECTIVES.md, "Data during a run"): RYE's `{input:x}`,
 * `{input:x:default}`, `{input:x|default}`, `{input:x?}`, `{env:VAR}`, `{env:VAR:default}`, and
 * graph-style `${dotted.path}`, `${path?}`, `${a.b || c.d}`. `$${` writes a literal `${` (for
 * shell text such as `$${HOME}`). Templates are parsed once and cached by their text, because
 * the same ones are evaluated at every step of every run.
 */
import { didYouMean, DirigentError, ErrorCode } from '../errors/index.js';
import { explainMiss, lookupPath, MISSING, splitPath } from './path.js';
import { readRoot, rootNames, type Scope } from './scope.js';

/** One path a template reads, for static validation by the compiler. */
export interface TemplateRef {
  /** `inputs`, `state`, `steps`, `result`, `error`, `env`, or a loop variable's name. */
  root: string;
  /** Segments below the root (`["files", "0", "path"]`). */
  path: string[];
  /** True when a miss of this path alone raises nothing (`?`, a default, or a later `||`). */
  optional: boolean;
  /** The template's text, braces included (`${state.files.0.path}`). */
  raw: string;
}

/** One `${…}`, `{input:…}` or `{env:…}` of a template. */
export interface TemplateSlot {
  /** Its text, braces included (`{input:name}`): how messages name it. */
  readonly raw: string;
  /** The variable it reads when it reads one environment variable and nothing else. */
  readonly envName: string | undefined;
}

/** A parsed template. */
export interface CompiledTemplate {
  /** True when the text is exactly one template: its value keeps its type. */
  readonly isWhole: boolean;
  /** Every path the template reads, in order. */
  readonly refs: TemplateRef[];
  /**
   * The literal text around the slots: one more than {@link slots} (`["echo '", "'"]` for
   * `echo '{input:x}'`), `$${` already turned into `${`. A text without templates is one text.
   */
  readonly texts: readonly string[];
  /** The templates in the text, in order. */
  readonly slots: readonly TemplateSlot[];
  /** The value of each slot, as {@link evaluate} would write it in (throws alike). */
  slotValues(scope: Scope): unknown[];
  /**
   * The value: for a whole template, the value itself (`undefined` for a missing optional one);
   * otherwise the text with each template replaced by {@link stringifyValue} of its value.
   * Throws `TEMPLATE_PATH_MISSING` (fatal) for a missing path without `?` or default.
   */
  evaluate(scope: Scope): unknown;
}

/** One `${…}`, `{input:…}` or `{env:…}` occurrence. */
interface Slot {
  raw: string;
  /** Alternatives, each starting with its root name (`["state", "x"]`). */
  paths: string[][];
  optional: boolean;
  /** The default text of `{input:x:default}` / `{input:x|default}`. */
  fallback: string | undefined;
}

type Part = string | Slot;

const ROOT_RE = /^[A-Za-z_]\w*$/;
const SEGMENT_RE = /^[\w-]+$/;
/** Inside the braces of a RYE form: kind, name, then nothing, `?`, or `:`/`|` and a default. */
const RYE_RE = /^(input|env):([A-Za-z_]\w*(?:\.[\w-]+)*)(?:(\?)|[:|]([\s\S]*))?$/;
const SYNTAX_HINT =
  'Templates are ${root.path}, ${path?}, ${a || b}, {input:x}, {input:x:default} or {env:VAR}; write $${ for a literal ${.';
/** Enough for every template of a large project; bounds memory if texts are generated. */
const CACHE_LIMIT = 2000;
const cache = new Map<string, CompiledTemplate>();

/** True when `text` contains template syntax (or the `$${` escape), i.e. needs compiling. */
export function hasTemplate(text: string): boolean {
  return text.includes('${') || text.includes('{input:') || text.includes('{env:');
}

/**
 * How a value is written into surrounding text: `null`/`undefined` → `""`, objects and arrays →
 * JSON, anything else → `String()`.
 */
export function stringifyValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * Parses `text` once (cached by text). Throws `INVALID_TEMPLATE` (fatal) for `${` without `}`,
 * an empty path, a root that is not a name, or a malformed `{input:…}` / `{env:…}`.
 */
export function compileTemplate(text: string): CompiledTemplate {
  let compiled = cache.get(text);
  if (compiled === undefined) {
    compiled = hasTemplate(text) ? build(text) : constant(text);
    if (cache.size >= CACHE_LIMIT) {
      const oldest = cache.keys().next();
      if (oldest.done !== true) cache.delete(oldest.value);
    }
    cache.set(text, compiled);
  }
  return compiled;
}

/**
 * Interpolates every string inside `value` (arrays and plain objects, recursively; keys are left
 * alone), as RYE does for graph params. Other values are returned as they are.
 */
export function interpolateDeep(value: unknown, scope: Scope): unknown {
  if (typeof value === 'string') {
    return hasTemplate(value) ? compileTemplate(value).evaluate(scope) : value;
  }
  if (Array.isArray(value)) return value.map((item) => interpolateDeep(item, scope));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = interpolateDeep(item, scope);
    return out;
  }
  return value;
}

function constant(text: string): CompiledTemplate {
  return {
    isWhole: false,
    refs: [],
    texts: [text],
    slots: [],
    slotValues: () => [],
    evaluate: () => text,
  };
}

function build(text: string): CompiledTemplate {
  const parts: Part[] = [];
  const refs: TemplateRef[] = [];
  let literal = '';
  let start = 0;
  let open = text.indexOf('{');
  while (open >= 0) {
    const dollar = open > 0 && text[open - 1] === '$';
    if (dollar && open > 1 && text[open - 2] === '$') {
      literal += text.slice(start, open - 1); // `$${` → `${`
      start = open;
    } else if (dollar || text.startsWith('input:', open + 1) || text.startsWith('env:', open + 1)) {
      const from = dollar ? open - 1 : open;
      const close = text.indexOf('}', open + 1);
      if (close < 0) {
        const snippet =
          text.length - from > 40 ? `${text.slice(from, from + 40)}…` : text.slice(from);
        throw invalid(
          snippet,
          `the "${text.slice(from, open + 1)}" that starts it is never closed with "}"`,
        );
      }
      const raw = text.slice(from, close + 1);
      const slot = dollar ? parseDollar(raw, text.slice(open + 1, close)) : parseRye(raw);
      literal += text.slice(start, from);
      if (literal !== '') parts.push(literal);
      literal = '';
      parts.push(slot);
      addRefs(slot, refs);
      start = close + 1;
    }
    open = text.indexOf('{', Math.max(open + 1, start));
  }
  literal += text.slice(start);
  if (literal !== '') parts.push(literal);
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only === undefined) {
    return parts.length === 0 ? constant('') : mixed(parts, refs);
  }
  if (typeof only === 'string') return constant(only);
  return {
    isWhole: true,
    refs,
    texts: ['', ''],
    slots: [slotInfo(only)],
    slotValues: (scope) => [resolve(only, scope)],
    evaluate: (scope) => resolve(only, scope),
  };
}

function mixed(parts: Part[], refs: TemplateRef[]): CompiledTemplate {
  const texts: string[] = [''];
  const slots: Slot[] = [];
  for (const part of parts) {
    if (typeof part === 'string') texts[texts.length - 1] += part;
    else {
      slots.push(part);
      texts.push('');
    }
  }
  return {
    isWhole: false,
    refs,
    texts,
    slots: slots.map(slotInfo),
    slotValues: (scope) => slots.map((slot) => resolve(slot, scope)),
    evaluate(scope) {
      let out = '';
      for (const part of parts) {
        out += typeof part === 'string' ? part : stringifyValue(resolve(part, scope));
      }
      return out;
    },
  };
}

function slotInfo(slot: Slot): TemplateSlot {
  const only = slot.paths.length === 1 ? slot.paths[0]! : undefined;
  const envName = only?.length === 2 && only[0] === 'env' ? only[1] : undefined;
  return { raw: slot.raw, envName };
}

function parseDollar(raw: string, body: string): Slot {
  let optional = false;
  const paths = body.split('||').map((alternative) => {
    let text = alternative.trim();
    if (text.endsWith('?')) {
      optional = true;
      text = text.slice(0, -1).trimEnd();
    }
    if (text === '') throw invalid(raw, 'the path is empty');
    const segments = splitPath(text);
    if (!ROOT_RE.test(segments[0]!)) {
      throw invalid(
        raw,
        `"${segments[0]}" is not a name; a path starts with inputs, state, steps, result, error, env or a loop variable`,
      );
    }
    const bad = segments.find((segment) => !SEGMENT_RE.test(segment));
    if (bad !== undefined) throw invalid(raw, `"${bad}" in "${text}" is not a valid path segment`);
    return segments;
  });
  return { raw, paths, optional, fallback: undefined };
}

function parseRye(raw: string): Slot {
  const match = RYE_RE.exec(raw.slice(1, -1));
  const kind = match?.[1];
  const name = match?.[2];
  if (match === null || kind === undefined || name === undefined) {
    throw invalid(raw, 'expected {input:name}, {input:name?}, {input:name:default} or {env:VAR}');
  }
  if (kind === 'env' && name.includes('.')) throw invalid(raw, `"${name}" is not a variable name`);
  const root = kind === 'env' ? 'env' : 'inputs';
  const segments = kind === 'env' ? [name] : splitPath(name);
  return { raw, paths: [[root, ...segments]], optional: match[3] === '?', fallback: match[4] };
}

function addRefs(slot: Slot, refs: TemplateRef[]): void {
  const last = slot.paths.length - 1;
  slot.paths.forEach((segments, index) => {
    const optional = slot.optional || slot.fallback !== undefined || index < last;
    refs.push({ root: segments[0]!, path: segments.slice(1), optional, raw: slot.raw });
  });
}

/** The first alternative that is set and not null; then the default, a null, or a miss. */
function resolve(slot: Slot, scope: Scope): unknown {
  let sawNull = false;
  for (const segments of slot.paths) {
    const root = readRoot(scope, segments[0]!, true);
    const value = root === MISSING ? MISSING : lookupPath(root, segments, 1);
    if (value === null) sawNull = true;
    else if (value !== MISSING) return value;
  }
  if (slot.fallback !== undefined) return slot.fallback;
  if (sawNull) return null;
  if (slot.optional) return undefined;
  throw missing(slot, scope);
}

function missing(slot: Slot, scope: Scope): DirigentError {
  const hints: string[] = [];
  const reasons = slot.paths.map((segments) => {
    const name = segments[0]!;
    const root = readRoot(scope, name, true);
    if (name === 'env' && segments.length > 1) {
      // Never list the environment: it is large and its names can be sensitive.
      return `environment variable "${segments[1]}" is not set`;
    }
    if (root === MISSING) {
      const names = rootNames(scope);
      if (names.includes(name)) return `"${name}" is not set here`;
      hints.push(didYouMean(name, names).trim());
      return `"${name}" is not a known name (known: ${names.join(', ')})`;
    }
    const why = explainMiss(root, segments);
    hints.push(didYouMean(why.segment, why.candidates).trim());
    return why.message;
  });
  hints.push(`Write ${exampleFor(slot.raw)} where a missing value is acceptable.`);
  const hint = hints.filter((text) => text !== '').join(' ');
  const message = `${slot.raw}: ${reasons.join('; ')}`;
  return fatal(ErrorCode.TEMPLATE_PATH_MISSING, message, hint, slot.raw);
}

function exampleFor(raw: string): string {
  if (raw.startsWith('{env:')) return '{env:VAR:default}';
  return raw.startsWith('{') ? '{input:name:default}' : '${path?}';
}

/** `template` is the offending piece only, not the whole text (a `<render>` can be long). */
function invalid(template: string, reason: string): DirigentError {
  const message = `invalid template ${template}: ${reason}`;
  return fatal(ErrorCode.INVALID_TEMPLATE, message, SYNTAX_HINT, template);
}

function fatal(code: ErrorCode, message: string, hint: string, template: string): DirigentError {
  return DirigentError.fatal(code, message, { hint, details: { template } });
}

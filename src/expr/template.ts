/**
 * Templates in directive text (DIRECTIVES.md, "Data during a run"): RYE's `{input:x}`,
 * `{input:x:default}`, `{input:x|default}`, `{input:x?}`, `{env:VAR}`, `{env:VAR:default}`, and
 * graph-style `${dotted.path}`, `${path?}`, `${a.b || c.d}`. `$${` writes a literal `${` (for
 * shell text such as `$${HOME}`). Templates are parsed once and cached by their text, because
 * the same ones are evaluated at every step of every run.
 */
import type { CompiledTemplate, TemplateRef, TemplateSlot } from './compiled-template.js';
import { resolveSlot } from './resolve-slot.js';
import type { Scope } from './scope.js';
import { invalidTemplate } from './template-error.js';
import { parseDollar, parseRye, type Slot } from './template-slot-parser.js';

export type { CompiledTemplate, TemplateRef, TemplateSlot } from './compiled-template.js';

/** A piece of a template's text: literal text, or a slot. */
type Part = string | Slot;

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

/** A text without templates. */
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

/** Parses a text with templates. */
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
        throw invalidTemplate(
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
    slotValues: (scope) => [resolveSlot(only, scope)],
    evaluate: (scope) => resolveSlot(only, scope),
  };
}

/** A template of literal text and slots, whose value is text. */
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
    slotValues: (scope) => slots.map((slot) => resolveSlot(slot, scope)),
    evaluate(scope) {
      let out = '';
      for (const part of parts) {
        out += typeof part === 'string' ? part : stringifyValue(resolveSlot(part, scope));
      }
      return out;
    },
  };
}

/** What callers see of a slot. */
function slotInfo(slot: Slot): TemplateSlot {
  const only = slot.paths.length === 1 ? slot.paths[0]! : undefined;
  const envName = only?.length === 2 && only[0] === 'env' ? only[1] : undefined;
  return { raw: slot.raw, envName };
}

/** Adds the paths `slot` reads to `refs`. */
function addRefs(slot: Slot, refs: TemplateRef[]): void {
  const last = slot.paths.length - 1;
  slot.paths.forEach((segments, index) => {
    const optional = slot.optional || slot.fallback !== undefined || index < last;
    refs.push({ root: segments[0]!, path: segments.slice(1), optional, raw: slot.raw });
  });
}

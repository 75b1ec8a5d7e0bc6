/**
 * The parameters of a tool call, rendered against the run's data. A parameter written as text
 * with templates (`value="echo 'Hello, {input:name}!'"`) is also kept in pieces, the author's text
 * apart from the values, so that the dispatcher can write the values in as data once it knows
 * what language the text is in (a shell command, a URL). A secret the directive declares is never
 * rendered here: its slot names it, and the dispatcher reads it where the tool runs.
 */
import type { ParamSpec } from '../directive/ast.js';
import type { Scope } from '../expr/scope.js';
import { compileTemplate, hasTemplate, stringifyValue } from '../expr/template.js';
import { evaluateValue } from '../expr/value.js';
import { REDACTED } from '../runtimes/redact-text.js';
import type { TemplatedParam } from '../tools/tool-call.js';

/** What {@link renderParams} returns. */
export interface RenderedParams {
  /** Every parameter, templates joined as plain text and secrets as `***`. */
  params: Record<string, unknown>;
  /** The parameters built from templates, in pieces; undefined when there are none. */
  templated: TemplatedParam[] | undefined;
}

/**
 * Renders `specs` in `scope`. `secrets` are the names of the secrets the directive declares: a
 * slot that reads one of them (`{env:TOKEN}`) is left to the dispatcher.
 */
export function renderParams(
  specs: readonly ParamSpec[],
  scope: Scope,
  secrets: ReadonlySet<string>,
): RenderedParams {
  const params: Record<string, unknown> = {};
  const templated: TemplatedParam[] = [];
  for (const p of specs) {
    const spec = p.value;
    const before = templated.length;
    if (spec.kind === 'template') {
      params[p.name] = renderText(spec.source, [p.name], scope, secrets, templated);
    } else if (spec.kind === 'deep') {
      params[p.name] = renderDeep(spec.value, [p.name], scope, secrets, templated);
    } else {
      const value = evaluateValue(spec, scope);
      // Dispatchers coerce and fill defaults in place: a literal of the directive is not shared.
      params[p.name] = value !== null && typeof value === 'object' ? structuredClone(value) : value;
    }
    if (p.allowOptions) for (const t of templated.slice(before)) t.allowOptions = true;
  }
  return { params, templated: templated.length > 0 ? templated : undefined };
}

function renderText(
  source: string,
  path: string[],
  scope: Scope,
  secrets: ReadonlySet<string>,
  templated: TemplatedParam[],
): unknown {
  const template = compileTemplate(source);
  const { slots, texts } = template;
  if (slots.length === 0) return texts[0];
  const secretSlots: Record<number, string> = {};
  slots.forEach((slot, i) => {
    if (slot.envName !== undefined && secrets.has(slot.envName)) secretSlots[i] = slot.envName;
  });
  const hasSecret = Object.keys(secretSlots).length > 0;
  // The common case, a value that is one template and no secret, keeps its type and needs no pieces.
  if (template.isWhole && !hasSecret) return template.evaluate(scope);
  const values = template.slotValues(scope).map((v, i) => (i in secretSlots ? null : v));
  const trusted = slots.flatMap((slot, i) => (slot.envName === undefined ? [] : [i]));
  templated.push({
    path,
    texts,
    labels: slots.map((slot) => slot.raw),
    values,
    ...(hasSecret && { secrets: secretSlots }),
    ...(trusted.length > 0 && { trusted }),
  });
  if (template.isWhole) return REDACTED;
  let joined = texts[0]!;
  values.forEach(
    (v, i) => (joined += (i in secretSlots ? REDACTED : stringifyValue(v)) + texts[i + 1]!),
  );
  return joined;
}

/** RYE graphs' structured params: every string inside is a template. */
function renderDeep(
  value: unknown,
  path: string[],
  scope: Scope,
  secrets: ReadonlySet<string>,
  templated: TemplatedParam[],
): unknown {
  if (typeof value === 'string') {
    return hasTemplate(value) ? renderText(value, path, scope, secrets, templated) : value;
  }
  if (Array.isArray(value)) {
    return value.map((item, i) =>
      renderDeep(item, [...path, String(i)], scope, secrets, templated),
    );
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = renderDeep(item, [...path, key], scope, secrets, templated);
    }
    return out;
  }
  return value;
}

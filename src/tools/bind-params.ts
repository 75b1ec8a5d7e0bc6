/**
 * The last step of rendering a tool call's parameters, taken where the tool runs: the parameters
 * the engine built from templates (`ToolCall.templated`) are written in for the language each one
 * is in (a shell command, a URL, plain text), and the secrets their templates read are resolved
 * here, never before, so that no secret travels in a job or lands in a run record.
 */
import { renderPieces } from '../values/render-pieces.js';
import { ShellVariables } from '../values/shell-render.js';
import type { Syntax } from '../values/syntax.js';
import type { ToolCall } from './tool-call.js';

/** What {@link bindParams} returns. */
export interface BoundParams {
  /** The parameters, each templated one written in for its language. */
  params: Record<string, unknown>;
  /** Variables the programs the tool runs must be given (the values of shell templates). */
  vars: ShellVariables;
  /** The secrets the templates read, by name: to be scrubbed from whatever comes back. */
  secrets: Record<string, string>;
}

/**
 * Binds `call.params` (a copy: the call is left as it is). `syntaxOf` names the language of a
 * top-level parameter; `readSecrets` resolves the names of the secrets the templates read.
 */
export async function bindParams(
  call: Pick<ToolCall, 'params' | 'templated'>,
  syntaxOf: (name: string) => Syntax | undefined,
  readSecrets: (names: string[]) => Promise<Record<string, string>>,
  vars: ShellVariables = new ShellVariables(),
): Promise<BoundParams> {
  const params = structuredClone(call.params);
  const templated = call.templated ?? [];
  const names = new Set<string>();
  for (const t of templated) for (const name of Object.values(t.secrets ?? {})) names.add(name);
  const secrets = names.size > 0 ? await readSecrets([...names]) : {};
  for (const t of templated) {
    const values = t.secrets
      ? t.values.map((v, i) => (t.secrets![i] !== undefined ? secrets[t.secrets![i]!] : v))
      : t.values;
    // Only a parameter itself has a declared language; a string inside a structured one is text.
    const syntax = t.path.length === 1 ? syntaxOf(t.path[0]!) : undefined;
    setAt(params, t.path, renderPieces({ ...t, values }, syntax, vars));
  }
  return { params, vars, secrets };
}

function setAt(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node: Record<string, unknown> = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === null || typeof next !== 'object') return;
    node = next as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}

/**
 * Configuration and environment of an executor chain (RYE §4.4–4.5): each link's `config` is
 * merged from the primitive up to the tool (the tool's settings win), then templated: first
 * `${VAR}` / `${VAR:-default}` from the environment, then `{name}` from the call's values
 * (`tool_path`, `project_path`, `params_json`, the parameters) or the config's own keys, which
 * may refer to each other 3 levels deep. A string that is exactly one `{name}` keeps the value's
 * type; an unknown `{…}` is left alone.
 */
import type { ChainLink } from '../items/tool-item.js';
import { renderPieces, type TemplatePieces } from '../values/render-pieces.js';
import { ShellVariables } from '../values/shell-render.js';
import type { Syntax } from '../values/syntax.js';
import { PrimitiveId } from './runtime-ids.js';

type Obj = Record<string, unknown>;

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const NAME_REF = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const PROGRAM_KEYS = ['command', 'args'] as const;

/**
 * The links' `config` merged, primitive first, so that the tool's own settings override; except
 * `command` and `args`, which come from the link nearest the primitive that declares them (a
 * runtime's program is not replaced by its tool's). `scope` keeps every key as the tool sees
 * it, for `{name}` templates: a bash tool's `command` fills the runtime's `{command}`.
 */
export function mergeChainConfig(chain: readonly ChainLink[]): { config: Obj; scope: Obj } {
  const scope: Obj = {};
  for (let i = chain.length - 1; i >= 0; i--) Object.assign(scope, chain[i]!.item.config);
  const config = { ...scope };
  for (const key of PROGRAM_KEYS) {
    const owner = [...chain].reverse().find((l) => key in l.item.config);
    if (owner) config[key] = owner.item.config[key];
  }
  return { config, scope };
}

/**
 * The environment of the call: `base`, then each link's `env_config.env` from the primitive up
 * to the tool, each value expanded against the variables set so far.
 */
export function chainEnvironment(
  chain: readonly ChainLink[],
  base: Record<string, string>,
): Record<string, string> {
  const env = { ...base };
  for (let i = chain.length - 1; i >= 0; i--) {
    for (const [k, v] of Object.entries(chain[i]!.item.envConfig?.env ?? {})) {
      env[k] = expandEnv(String(v), env);
    }
  }
  return env;
}

/** `${VAR}` and `${VAR:-default}` replaced from `env` (an unset variable without default: ""). */
export function expandEnv(text: string, env: Record<string, string>): string {
  return text.replace(ENV_REF, (_, name: string, fallback: string | undefined) => {
    const v = env[name];
    return v !== undefined && v !== '' ? v : (fallback ?? '');
  });
}

/**
 * Templates every string in `config`, see the module comment; `{name}` is looked up in `values`
 * (the call's), then `scope` (the config as the tool declares it). The config's own text is the
 * tool author's and is expanded into place; a value is written in once, never templated again,
 * and for the language of the string it lands in (`syntaxes`, by path such as `args.1`): values in
 * shell text become variables added to `vars`, values in a URL are encoded.
 */
export function templateConfig(
  config: Obj,
  env: Record<string, string>,
  values: Obj,
  scope: Obj = config,
  syntaxes: Record<string, Syntax> = {},
  vars: ShellVariables = new ShellVariables(),
): Obj {
  const expanded = mapStrings(scope, (s) => expandEnv(s, env)) as Obj;
  return mapStrings(
    mapStrings(config, (s) => expandEnv(s, env)),
    (text, path) => renderPieces(piecesOf(text, values, expanded), syntaxes[path], vars),
  ) as Obj;
}

/**
 * Where the config holds code: the script of a shell program's `-c` (`args.N`), and the URL of
 * the HTTP primitive. Keyed by path, as {@link templateConfig} takes them.
 */
export function configSyntaxes(config: Obj, primitiveId: string): Record<string, Syntax> {
  const out: Record<string, Syntax> = {};
  if (primitiveId === PrimitiveId.HTTP_CLIENT) out.url = 'url';
  const program = typeof config.command === 'string' ? config.command : '';
  if (
    SHELL_PROGRAMS.has(program.slice(program.lastIndexOf('/') + 1)) &&
    Array.isArray(config.args)
  ) {
    const flag = config.args.findIndex(
      (a) => typeof a === 'string' && /^-[A-Za-z]*c[A-Za-z]*$/.test(a),
    );
    if (flag >= 0 && flag + 1 < config.args.length) out[`args.${flag + 1}`] = 'shell';
  }
  return out;
}

/**
 * Parameters that are the whole of a config string in some language (`args: ['-c', '{command}']`
 * with `command` a parameter): a directive that builds such a parameter from a template gets its
 * values written in for that language.
 */
export function paramSyntaxes(
  config: Obj,
  scope: Obj,
  syntaxes: Record<string, Syntax>,
  params: Iterable<string>,
): Record<string, Syntax> {
  const names = Object.fromEntries([...params].map((name) => [name, undefined]));
  const out: Record<string, Syntax> = {};
  for (const [path, syntax] of Object.entries(syntaxes)) {
    const text = path.split('.').reduce<unknown>((v, key) => (v as Obj | undefined)?.[key], config);
    if (typeof text !== 'string') continue;
    const pieces = piecesOf(text, names, scope);
    const only = pieces.labels.length === 1 && pieces.texts.every((t) => t === '');
    const name = only ? /^\{(.*)\}$/.exec(pieces.labels[0]!)?.[1] : undefined;
    if (name !== undefined && name in names) out[name] = syntax;
  }
  return out;
}

/** Programs whose `-c` option takes a script. */
const SHELL_PROGRAMS = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh']);
/** How deep config keys may refer to each other (RYE repeats its passes at most 3 times). */
const MAX_NESTING = 3;

/**
 * `text` taken apart: its own text (with config keys it names expanded into place) and the values
 * of the names it refers to. An unknown `{…}` stays text.
 */
function piecesOf(text: string, values: Obj, scope: Obj, depth = 0): TemplatePieces {
  const texts: string[] = [];
  const labels: string[] = [];
  const found: unknown[] = [];
  let tail = '';
  let last = 0;
  const slot = (label: string, value: unknown) => {
    texts.push(tail);
    tail = '';
    labels.push(label);
    found.push(value);
  };
  for (const m of text.matchAll(NAME_REF)) {
    const name = m[1]!;
    tail += text.slice(last, m.index);
    last = m.index + m[0].length;
    const inner = scope[name];
    if (name in values) slot(m[0], values[name]);
    else if (typeof inner === 'string' && depth < MAX_NESTING) {
      const nested = piecesOf(inner, values, scope, depth + 1);
      nested.values.forEach((value, i) => {
        tail += nested.texts[i]!;
        slot(nested.labels[i]!, value);
      });
      tail += nested.texts[nested.texts.length - 1]!;
    } else if (name in scope && typeof inner !== 'string') slot(m[0], inner);
    else tail += m[0];
  }
  texts.push(tail + text.slice(last));
  return { texts, labels, values: found };
}

function mapStrings(value: unknown, f: (s: string, path: string) => unknown, path = ''): unknown {
  const at = (key: string | number) => (path === '' ? String(key) : `${path}.${key}`);
  if (typeof value === 'string') return f(value, path);
  if (Array.isArray(value)) return value.map((v, i) => mapStrings(v, f, at(i)));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, f, at(k))]));
  }
  return value;
}

/**
 * Configuration and environment of an executor chain (RYE §4.4–4.5): each link's `config` is
 * merged from the primitive up to the tool (the tool's settings win), then templated: first
 * `${VAR}` / `${VAR:-default}` from the environment, then `{name}` from the call's values
 * (`tool_path`, `project_path`, `params_json`, the parameters, the config's own keys), repeated
 * until stable (at most 3 passes). A string that is exactly one `{name}` keeps the value's type;
 * an unknown `{…}` is left alone.
 */
import type { ChainLink } from '../items/tool-item.js';

type Obj = Record<string, unknown>;

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const NAME_REF = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const PROGRAM_KEYS = ['command', 'args'] as const;
const WHOLE_NAME = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

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
 * Templates every string in `config` (deeply), see the module comment; `{name}` is looked up in
 * `values` (the call's), then `scope` (the config as the tool declares it).
 */
export function templateConfig(
  config: Obj,
  env: Record<string, string>,
  values: Obj,
  scope: Obj = config,
): Obj {
  const names = { ...(mapStrings(scope, (s) => expandEnv(s, env)) as Obj), ...values };
  const expanded = mapStrings(config, (s) => expandEnv(s, env)) as Obj;
  let current: unknown = expanded;
  for (let pass = 0; pass < 3; pass++) {
    const next = mapStrings(current, (s) => fillNames(s, names));
    if (JSON.stringify(next) === JSON.stringify(current)) break;
    current = next;
  }
  return current as Obj;
}

function fillNames(text: string, scope: Obj): unknown {
  const whole = WHOLE_NAME.exec(text);
  if (whole && whole[1]! in scope) return scope[whole[1]!];
  return text.replace(NAME_REF, (ref, name: string) => {
    if (!(name in scope)) return ref;
    const v = scope[name];
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
}

function mapStrings(value: unknown, f: (s: string) => unknown): unknown {
  if (typeof value === 'string') return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, f)]));
  }
  return value;
}

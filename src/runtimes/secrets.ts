/**
 * Secrets a tool declares (`required_secrets`), read from the environment or from a secrets file
 * outside the project (`$DIRIGENT_SECRETS_FILE`, default `~/.config/dirigent/secrets.env`, lines
 * of `NAME=value`), handed only to the tool that declares them, and scrubbed from whatever comes
 * back (results, errors), so a secret never reaches a log or a run record.
 */
import { readFile, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative, isAbsolute } from 'node:path';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { redactText } from './redact-text.js';
import { missingSecrets } from '../errors/runtime-errors.js';

/** Where secrets come from. */
export interface SecretSources {
  env: Record<string, string | undefined>;
  /** The secrets file; defaults as the module comment says. */
  file?: string;
  projectDir: string;
}

/** The default secrets file. */
export function defaultSecretsFile(env: Record<string, string | undefined> = process.env): string {
  return env.DIRIGENT_SECRETS_FILE || join(homedir(), '.config', 'dirigent', 'secrets.env');
}

/**
 * The values of `names`: the environment first, then the secrets file. Throws `MISSING_SECRET`
 * naming every missing one and where to put it, or when the secrets file lies inside the project
 * (where it would be committed or read by the project's own tools).
 */
export async function resolveSecrets(
  itemId: string,
  names: readonly string[],
  sources: SecretSources,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  if (names.length === 0) return out;
  const missing = names.filter((n) => {
    const v = sources.env[n];
    if (v !== undefined && v !== '') out[n] = v;
    return out[n] === undefined;
  });
  if (missing.length === 0) return out;
  const file = sources.file ?? defaultSecretsFile(sources.env);
  const fromFile = await readSecretsFile(file, sources.projectDir);
  const still = missing.filter((n) => {
    if (fromFile[n] !== undefined) out[n] = fromFile[n];
    return out[n] === undefined;
  });
  if (still.length > 0) {
    throw missingSecrets(`Tool "${itemId}"`, still, file);
  }
  return out;
}

async function readSecretsFile(file: string, projectDir: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return {};
  }
  const [real, project] = await Promise.all([
    realpath(file),
    realpath(projectDir).catch(() => projectDir),
  ]);
  const rel = relative(project, real);
  if (!rel.startsWith('..') && !isAbsolute(rel)) {
    throw DirigentError.fatal(
      ErrorCode.MISSING_SECRET,
      `The secrets file ${file} is inside the project ${projectDir}; secrets are not read from there.`,
      {
        hint: 'Move it outside the project (e.g. ~/.config/dirigent/secrets.env) and set DIRIGENT_SECRETS_FILE.',
      },
    );
  }
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m || line.trimStart().startsWith('#')) continue;
    let v = m[2]!;
    if (v.length >= 2 && (v[0] === '"' || v[0] === "'") && v.endsWith(v[0])) v = v.slice(1, -1);
    out[m[1]!] = v;
  }
  return out;
}

/**
 * `value` with every occurrence of a secret's value replaced by `***`, deeply (strings
 * in arrays and objects, including a `DirigentError`'s message, hint and details).
 */
export function redactSecrets<T>(value: T, secrets: Record<string, string>): T {
  const values = Object.values(secrets);
  if (values.length === 0) return value;
  const scrub = (s: string) => redactText(s, values);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return scrub(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v instanceof DirigentError) {
      const j = v.toJSON();
      return DirigentError.fromJSON(walk(j) as typeof j);
    }
    if (typeof v === 'object' && v !== null) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

/**
 * Later RYE directives drop the XML: YAML front matter (`description`, `version`, `inputs`,
 * `permissions`, `limits`, …) followed by Markdown instructions for an agent. Dirigent reads
 * them as a directive with one instruction step holding the Markdown, so they run as RYE meant:
 * whoever answers the instruction does the work.
 */
import { noRunSettings } from './run-settings.js';
import { basename, extname } from 'node:path';
import type * as Yaml from 'yaml';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import {
  INPUT_TYPES,
  type Directive,
  type InputDecl,
  type InputType,
  type OutputDecl,
} from './ast.js';
import { coerceValue } from './coerce-value.js';
import { Diagnostics } from './diagnostics.js';
import { LineIndex } from './line-index.js';
import { emptyLimits } from './read-metadata.js';
import { lazyPackage } from '../lazy-package.js';

/** The YAML reader, loaded by the first front-matter directive read. */
const yaml = lazyPackage<typeof Yaml>('yaml');

type Obj = Record<string, unknown>;
const SIGNATURE = /^<!--\s*[\w-]+:(?:signed|validated):.*-->\s*$/;
const FRONT = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** The front matter's start and text, when `text` is a front-matter directive (no ```xml fence). */
export function frontMatterOf(
  text: string,
): { offset: number; yaml: string; body: string; signature: string | undefined } | undefined {
  const firstLine = text.slice(0, text.indexOf('\n') + 1 || text.length);
  const signature = SIGNATURE.test(firstLine.trim()) ? firstLine.trim() : undefined;
  const offset = signature === undefined ? 0 : firstLine.length;
  // Front matter opens the file (after the signature); most directives do not start with `---`,
  // and they are told apart without searching the whole text for a fence.
  if (!text.startsWith('---', offset) || /^```xml\s*$/m.test(text)) return undefined;
  const m = FRONT.exec(text.slice(offset));
  if (!m) return undefined;
  return { offset, yaml: m[1]!, body: text.slice(offset + m[0].length), signature };
}

/** Reads a front-matter directive (see the module comment). */
export function readFrontMatterDirective(text: string, file: string, hash: string): Directive {
  const lines = new LineIndex(file, text);
  const front = frontMatterOf(text)!;
  const loc = lines.at(front.offset);
  let meta: Obj;
  try {
    meta = (yaml().parse(front.yaml) ?? {}) as Obj;
  } catch (err) {
    throw DirigentError.fatal(
      ErrorCode.XML_SYNTAX,
      `The front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`,
      { location: loc },
    );
  }
  const diag = new Diagnostics();
  const body = front.body.trim();
  const titleLine = /^#\s+(.+)$/m.exec(body);
  const limits = (meta.limits ?? {}) as Obj;
  return {
    name: typeof meta.name === 'string' ? meta.name : basename(file, extname(file)),
    version: String(meta.version ?? '1.0.0'),
    title: titleLine?.[1]?.trim(),
    preamble: '',
    description: typeof meta.description === 'string' ? meta.description : undefined,
    category: typeof meta.category === 'string' ? meta.category : undefined,
    author: typeof meta.author === 'string' ? meta.author : undefined,
    limits: {
      ...emptyLimits(),
      durationSeconds: num(limits.duration_seconds),
      depth: num(limits.depth),
      spawns: num(limits.spawns),
      other: Object.fromEntries(
        Object.entries(limits).filter(([, v]) => typeof v === 'number' || typeof v === 'string'),
      ) as Record<string, string | number>,
    },
    permissions: meta.permissions === undefined ? undefined : permissionsOf(meta.permissions),
    inputs: inputsOf(meta.inputs, loc, diag),
    outputs: outputsOf(meta.outputs, loc),
    schedules: [],
    events: [],
    runSettings: noRunSettings(),
    returnsState: false,
    process:
      body === ''
        ? []
        : [
            {
              kind: 'step',
              name: 'instructions',
              loc,
              action: {
                type: 'instruction',
                text: body,
                signal: 'instructions',
                timeoutMs: undefined,
                loc,
              },
              condition: undefined,
              assigns: [],
              onError: undefined,
              next: undefined,
              retry: undefined,
              timeoutMs: undefined,
              description: undefined,
            },
          ],
    initialState: {},
    metadata: Object.fromEntries(
      Object.entries(meta).filter(
        ([k]) =>
          ![
            'name',
            'version',
            'description',
            'category',
            'author',
            'limits',
            'permissions',
            'secrets',
            'inputs',
            'outputs',
          ].includes(k),
      ),
    ),
    secrets: Array.isArray(meta.secrets) ? meta.secrets.map(String) : [],
    valueChecks: [],
    successCriteria: [],
    signature: front.signature,
    source: { file, hash, format: 'directive' },
    warnings: diag.warnings,
  };
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

/** `{execute: ["*"], fetch: ["tool:x"]}` → `rye.execute.*`, `rye.fetch.tool:x`. */
function permissionsOf(p: unknown): string[] {
  if (p === '*') return ['rye.*'];
  if (Array.isArray(p)) return p.map(String);
  if (p === null || typeof p !== 'object') return [];
  return Object.entries(p as Obj).flatMap(([primary, list]) =>
    (Array.isArray(list) ? list : [list]).map((pat) => `rye.${primary}.${String(pat)}`),
  );
}

function inputsOf(
  raw: unknown,
  loc: Directive['process'][number]['loc'],
  diag: Diagnostics,
): InputDecl[] {
  if (!Array.isArray(raw)) return [];
  return (raw as Obj[]).map((i) => {
    const type = (
      (INPUT_TYPES as readonly string[]).includes(String(i.type)) ? i.type : 'string'
    ) as InputType;
    if (i.type !== undefined && type !== i.type)
      diag.warn(
        'INPUT_TYPE',
        `Input "${String(i.name)}" has type "${String(i.type)}"; it is read as a string.`,
        loc,
      );
    const c = i.default === undefined ? undefined : coerceValue(i.default, type);
    return {
      name: String(i.name),
      type,
      required: i.required === true,
      optional: i.required === false,
      default: c?.ok ? c.value : undefined,
      hasDefault: c?.ok === true,
      description: typeof i.description === 'string' ? i.description : undefined,
      loc,
    };
  });
}

function outputsOf(raw: unknown, loc: Directive['process'][number]['loc']): OutputDecl[] {
  const entries = Array.isArray(raw)
    ? (raw as Obj[]).map((o) => [String(o.name), o.description] as const)
    : raw && typeof raw === 'object'
      ? Object.entries(raw as Obj)
      : [];
  return entries.map(([name, description]) => ({
    name,
    value: undefined,
    description: typeof description === 'string' ? description : undefined,
    loc,
  }));
}

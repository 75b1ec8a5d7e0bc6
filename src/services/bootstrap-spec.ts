/**
 * The `bootstrap` declaration of a tool (seed 003's "Bootstrap Configuration"), read from plain
 * data (a YAML mapping, a JS/TS export literal, a Python module-level dict) and checked field by
 * field:
 *
 * ```yaml
 * bootstrap: { enabled: true, mode: continuous, priority: 90, wait_for: [db/migrate], input: {} }
 * ```
 *
 * `dirigent worker` starts the tools that declare it enabled with mode `once` or `continuous`
 * (see `bootstrap-runner.ts`).
 */
import { closest } from '../errors/did-you-mean.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';

/** How a bootstrap tool runs: once per deployment and version, kept running, or never. */
export type BootstrapMode = 'once' | 'continuous' | 'disabled';

/** A tool's checked `bootstrap` declaration. */
export interface BootstrapSpec {
  /** Whether the tool starts with the workers at all. */
  enabled: boolean;
  /** `disabled` when not enabled and no mode is given. */
  mode: BootstrapMode;
  /** 0 to 100, higher starts first; default {@link DEFAULT_BOOTSTRAP_PRIORITY}. */
  priority: number;
  /** Item ids of the bootstrap tools that must be done (`once`) or running (`continuous`) first. */
  waitFor: string[];
  /** The parameters the tool is called with; `{}` when not declared. */
  input: Record<string, unknown>;
}

/** Who declares a bootstrap spec and where, for the error messages. */
export interface BootstrapSpecSource {
  /** What declares it, as a person reads it: `YAML tool /p/.ai/tools/x.yaml`. */
  subject: string;
  /** How the declaration is spelled in its format: `bootstrap` (default) or `BOOTSTRAP`. */
  name?: string;
  /**
   * Where the field at `path` (`[]` for the declaration itself, `['mode']`, …) is written; the
   * errors carry it.
   */
  locate?: (path: readonly string[]) => SourceLocation | undefined;
}

/** Priority of a bootstrap tool that declares none. */
export const DEFAULT_BOOTSTRAP_PRIORITY = 50;

const FIELDS = ['enabled', 'mode', 'priority', 'wait_for', 'input'];
const MODES: readonly BootstrapMode[] = ['once', 'continuous', 'disabled'];
/** Segments of an item id, as the resolver accepts them. */
const ITEM_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]*(?:\/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$/;

/**
 * Reads a `bootstrap` declaration; `undefined` when there is none (`value` is undefined or null).
 * Throws a fatal `INVALID_TOOL` {@link DirigentError}, located where the source says the field is,
 * for a declaration that is not a mapping, an unknown field (naming the known ones), a missing or
 * non-boolean `enabled`, a `mode` other than once, continuous or disabled (required when enabled),
 * a `priority` outside 0–100, a `wait_for` that is not a list of item ids, or an `input` that is
 * not a mapping.
 */
export function parseBootstrapSpec(
  value: unknown,
  source: BootstrapSpecSource,
): BootstrapSpec | undefined {
  if (value === undefined || value === null) return undefined;
  const name = source.name ?? 'bootstrap';
  const fail = (field: string | undefined, message: string, hint: string): never => {
    const path = field === undefined ? [] : [field];
    const location = source.locate?.(path);
    throw DirigentError.fatal(ErrorCode.INVALID_TOOL, `${source.subject}: ${message}`, {
      ...(location !== undefined && { location }),
      hint,
      details: { path: field === undefined ? name : `${name}.${field}` },
    });
  };
  const example = `${name}: { enabled: true, mode: once, priority: 50, wait_for: [], input: {} }`;
  if (!isObject(value))
    return fail(
      undefined,
      `\`${name}\` must be a mapping of ${FIELDS.join(', ')}, not ${show(value)}.`,
      `Write e.g. ${example}.`,
    );
  for (const key of Object.keys(value)) {
    if (FIELDS.includes(key)) continue;
    const guess = closest(key, FIELDS);
    fail(
      key,
      `\`${name}.${key}\` is not a known field${guess ? ` (did you mean \`${guess}\`?)` : ''}.`,
      `${name} may hold ${FIELDS.join(', ')}.`,
    );
  }
  const enabled = value.enabled;
  if (typeof enabled !== 'boolean')
    fail(
      'enabled',
      enabled === undefined
        ? `\`${name}.enabled\` is required: true or false.`
        : `\`${name}.enabled\` must be true or false, not ${show(enabled)}.`,
      `Write e.g. ${example}.`,
    );
  const mode = value.mode;
  if (mode === undefined && enabled === true)
    fail(
      undefined,
      `\`${name}.mode\` is required when enabled is true: once, continuous or disabled.`,
      'once runs the tool once per deployment and version; continuous keeps one instance running.',
    );
  if (mode !== undefined && !MODES.includes(mode as BootstrapMode)) {
    const guess = typeof mode === 'string' ? closest(mode, MODES) : undefined;
    fail(
      'mode',
      `\`${name}.mode\` must be once, continuous or disabled, not ${show(mode)}${guess ? ` (did you mean \`${guess}\`?)` : ''}.`,
      'once runs the tool once per deployment and version; continuous keeps one instance running.',
    );
  }
  const priority = value.priority ?? DEFAULT_BOOTSTRAP_PRIORITY;
  if (typeof priority !== 'number' || !Number.isFinite(priority) || priority < 0 || priority > 100)
    fail(
      'priority',
      `\`${name}.priority\` must be a number from 0 to 100 (higher starts first), not ${show(priority)}.`,
      `Write e.g. priority: 90; the default is ${DEFAULT_BOOTSTRAP_PRIORITY}.`,
    );
  const waitFor = value.wait_for ?? [];
  if (!Array.isArray(waitFor))
    fail(
      'wait_for',
      `\`${name}.wait_for\` must be a list of tool item ids, not ${show(waitFor)}.`,
      `Write e.g. wait_for: [${typeof waitFor === 'string' ? waitFor : 'services/scheduler'}].`,
    );
  (waitFor as unknown[]).forEach((id, i) => {
    if (typeof id !== 'string' || !ITEM_ID.test(id))
      fail(
        'wait_for',
        `\`${name}.wait_for[${i}]\` must be a tool item id (a string such as "services/scheduler"), not ${show(id)}.`,
        'Name each bootstrap tool to wait for by its item id: its path under .ai/tools/ without the extension.',
      );
  });
  const input = value.input ?? {};
  if (!isObject(input))
    fail(
      'input',
      `\`${name}.input\` must be a mapping of parameters, not ${show(input)}.`,
      'Write the parameters the tool is called with, e.g. input: { force_refresh: false }.',
    );
  return {
    enabled: enabled as boolean,
    mode: (mode as BootstrapMode | undefined) ?? 'disabled',
    priority: priority as number,
    waitFor: [...new Set(waitFor as string[])],
    input: input as Record<string, unknown>,
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function show(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Errors about items (directives, tools, knowledge) and the spaces that hold them: an item no
 * space holds, a kind or space that does not exist, the read-only system space, and a tool file
 * that does not parse or lacks what a tool needs.
 */
import { didYouMean } from './did-you-mean.js';
import { DirigentError } from './dirigent-error.js';
import { ErrorCode } from './error-codes.js';
import type { SourceLocation } from './source-location.js';

/** The kinds of items, as error messages name them (the same as `ItemKind`). */
export type ItemKindName = 'directive' | 'tool' | 'knowledge';

const NOT_FOUND: Record<ItemKindName, ErrorCode> = {
  directive: ErrorCode.UNKNOWN_DIRECTIVE,
  tool: ErrorCode.UNKNOWN_TOOL,
  knowledge: ErrorCode.UNKNOWN_KNOWLEDGE,
};

/** The code of an item of `kind` that is not found: `UNKNOWN_DIRECTIVE`, `UNKNOWN_TOOL`, … */
export function itemNotFoundCode(kind: ItemKindName): ErrorCode {
  return NOT_FOUND[kind];
}

/** Options of {@link itemNotFound}. */
export interface ItemNotFoundOptions {
  /** Where it was looked for, as the message ends: `any space` (the default), `the project space`. */
  in?: string;
  /** `itemId` is a pattern (`notes/*`) that matched nothing, not one id. */
  pattern?: boolean;
  /** Where it was looked for, as files, and how to fix it. */
  hint: string;
  /** More facts (the space searched, where the item was found instead). */
  details?: Record<string, unknown>;
}

/**
 * `UNKNOWN_DIRECTIVE`, `UNKNOWN_TOOL` or `UNKNOWN_KNOWLEDGE` (by `kind`): no space searched holds
 * the item `itemId` (or, with `pattern`, no item matches it).
 */
export function itemNotFound(
  kind: ItemKindName,
  itemId: string,
  options: ItemNotFoundOptions,
): DirigentError {
  const where = options.in ?? 'any space';
  return DirigentError.fatal(
    NOT_FOUND[kind],
    options.pattern
      ? `No ${kind} in ${where} matches "${itemId}".`
      : `No ${kind} "${itemId}" in ${where}.`,
    { hint: options.hint, details: { itemId, kind, ...options.details } },
  );
}

/** Options of {@link unknownTool}. */
export interface UnknownToolOptions {
  /** Why no tool has the id, when more than "none is known": `no space holds it`. */
  why?: string;
  /** Where else it was looked for (files), before the list of tools. */
  hint?: string;
  /** What `known` holds, to name the list in the hint; default `Tools`. */
  knownAs?: string;
}

/**
 * `UNKNOWN_TOOL`: `itemId` is no tool of `known` (the tools that could have been meant), with a
 * did-you-mean among them in the message and all of them in the hint.
 */
export function unknownTool(
  itemId: string,
  known: readonly string[],
  options: UnknownToolOptions = {},
): DirigentError {
  const why = options.why === undefined ? '' : `: ${options.why}`;
  const where = options.hint === undefined ? '' : `${options.hint} `;
  return DirigentError.fatal(
    ErrorCode.UNKNOWN_TOOL,
    `Unknown tool "${itemId}"${why}.${didYouMean(itemId, known)}`,
    {
      hint: `${where}${options.knownAs ?? 'Tools'}: ${known.join(', ') || '(none)'}.`,
      details: { itemId, available: known },
    },
  );
}

/** `INVALID_REQUEST`: `given` is not a kind of item (`kinds` are). */
export function notAnItemKind(given: string, kinds: readonly string[]): DirigentError {
  return DirigentError.fatal(
    ErrorCode.INVALID_REQUEST,
    `"${given}" is not an item type.${didYouMean(given, kinds)}`,
    { hint: `Item types: ${kinds.join(', ')}.` },
  );
}

/**
 * `INVALID_REQUEST`: the project has no space `given` (the system space, or a user space it was
 * opened without); `hint` names the spaces the operation takes.
 */
export function noSuchSpace(given: string, hint: string): DirigentError {
  return DirigentError.fatal(ErrorCode.INVALID_REQUEST, `There is no ${given} space here.`, {
    hint,
    details: { space: given },
  });
}

/**
 * `SPACE_READ_ONLY`: `what` (`Cannot sign tool "a/b"`, `Cannot revoke key k`) would change the
 * system space, whose items and keys ship with Dirigent; `hint` says what to do instead.
 */
export function systemSpaceReadOnly(
  what: string,
  hint: string,
  details?: Record<string, unknown>,
): DirigentError {
  return DirigentError.fatal(ErrorCode.SPACE_READ_ONLY, `${what}: the system space is read-only.`, {
    hint,
    ...(details !== undefined && { details }),
  });
}

/** The languages a tool file may be written in, as messages name them. */
export type ToolLanguage = 'JS' | 'Python';

/**
 * `INVALID_TOOL`: the `language` tool `file` does not parse (`message`, at `location`). Tool
 * files are read without being run, so nothing ran.
 */
export function toolDoesNotParse(
  language: ToolLanguage,
  file: string,
  message: string,
  location: SourceLocation,
  cause?: unknown,
): DirigentError {
  return DirigentError.fatal(
    ErrorCode.INVALID_TOOL,
    `${language} tool ${file} does not parse: ${message}.`,
    {
      location,
      hint: 'Fix the syntax error; the tool is read without being run.',
      ...(cause !== undefined && { cause }),
    },
  );
}

/**
 * `INVALID_TOOL`: the `language` tool `file` lacks `missing` (field names, in `details.missing`),
 * written as the file would write them in `shown`; `hint` says what a tool of the language holds.
 */
export function toolMissingFields(
  language: ToolLanguage,
  file: string,
  missing: { name: string; shown: string }[],
  hint: string,
): DirigentError {
  const shown = missing.map((m) => m.shown);
  const list =
    shown.length > 1 ? `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)!}` : (shown[0] ?? '');
  return DirigentError.fatal(
    ErrorCode.INVALID_TOOL,
    `${language} tool ${file} is missing ${list}.`,
    {
      location: { file, line: 1, column: 1 },
      hint,
      details: { missing: missing.map((m) => m.name) },
    },
  );
}

/**
 * `INVALID_TOOL`: a tool's YAML file (a YAML tool, an MCP server file) is not valid YAML;
 * `message` is the parser's first line, `location` where it stopped.
 */
export function toolYamlInvalid(
  file: string,
  message: string,
  location: SourceLocation | undefined,
): DirigentError {
  return DirigentError.fatal(ErrorCode.INVALID_TOOL, `${file} is not valid YAML: ${message}`, {
    ...(location !== undefined && { location }),
    hint: 'Fix the YAML syntax at that line; the file is read, not run.',
  });
}

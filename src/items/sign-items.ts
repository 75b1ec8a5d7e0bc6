/**
 * RYE's `sign` (reference §5.6): find an item, or every item a glob matches, in one space (project
 * or user; the system space is read-only), validate it, and sign it in place with the user's key.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import picomatch from 'picomatch';
import { DirigentError, type SerializedError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { KIND_DIRS, KIND_EXTENSIONS, type ItemKind } from './item-kind.js';
import { ItemResolver } from './item-resolver.js';
import { signItem, type SigningKey } from './signing/sign-item.js';
import type { Space, SpaceName } from './space.js';
import { validateItem, type ItemIssue } from './validate-item.js';

/** What to sign. */
export interface SignItemsRequest {
  kind: ItemKind;
  /** An item id, or a glob of item ids (`*`, `?`; `**` across folders). */
  itemId: string;
  /** The space the item is looked up in, and signed in (default `project`). */
  space?: SpaceName;
  /** The project's spaces (`defaultSpaces(projectDir)`). */
  spaces: readonly Space[];
  /** The project: its policy for directives, its Python for Python tools. */
  projectDir: string;
  /**
   * The signing key (`readSigningKey`), or a function that reads it. A function is called once,
   * only after the space and the item (or the glob's matches) are found, so that a wrong call is
   * reported as such, not as a missing key.
   */
  key: SigningKey | (() => Promise<SigningKey>);
  /** The signing time. Default: now. */
  now?: Date;
}

/** One item signed. */
export interface SignedItem {
  status: 'signed';
  itemId: string;
  file: string;
  space: SpaceName;
  /**
   * The signature line's fields. `format` `rye`: a `rye:signed` line, `keyId` the 16-hex
   * fingerprint; `ryeos`: a `ryeos:signed` line (for an item the `rye:signed` hash would not cover
   * whole, such as a knowledge entry with `---` front matter), `keyId` the 64-hex fingerprint.
   */
  signature: { timestamp: string; hash: string; keyId: string; format: 'rye' | 'ryeos' };
  /** What the signer should know: uncovered text, validation warnings. */
  warnings: string[];
}

/** An item of a glob that was not signed, and why. */
export interface FailedItem {
  itemId: string;
  error: Pick<SerializedError, 'code' | 'message' | 'hint'>;
  /** The validation issues, when that is why. */
  issues?: ItemIssue[];
}

/** The outcome of signing a glob. */
export interface SignedBatch {
  status: 'completed';
  /** The item ids signed, in order. */
  signed: string[];
  failed: FailedItem[];
  /** How many items the glob matched. */
  total: number;
  /** The result of each item signed, in the order of {@link signed}. */
  items: SignedItem[];
}

/**
 * Signs an item, or each item a glob matches, in one space: each is validated
 * (`validateItem`) and then signed in place (`signItem`: any old signature line is replaced).
 *
 * An item id holding `*` or `?` is a glob over item ids under the space's folder for the kind
 * (`.ai/tools/` …); a pattern without `/` matches at any depth (RYE's `**\/<pattern>`). Files and
 * folders whose names start with `.` or `_` (helpers such as `__init__.py`), and the tool
 * registry `tools/enabled.json`, are not items. An item id matches once however many files it has
 * (the one resolution picks is signed).
 *
 * @returns {@link SignedItem} for an item id, {@link SignedBatch} for a glob (whose items may fail
 *   one by one without stopping the others).
 * @throws DirigentError `SPACE_READ_ONLY` for the system space; `INVALID_ITEM` (issues in
 *   `details.issues`) for a single item that does not validate; `UNKNOWN_TOOL` /
 *   `UNKNOWN_DIRECTIVE` / `UNKNOWN_KNOWLEDGE` when the space holds no such item, or nothing the
 *   glob matches; `INVALID_ITEM_ID`; `BAD_SIGNATURE` for a key that is not an Ed25519 pair;
 *   what reading the key throws (`NO_SIGNING_KEY`), after the item is found.
 */
export async function signItems(request: SignItemsRequest): Promise<SignedItem | SignedBatch> {
  const spaceName = request.space ?? 'project';
  if (spaceName === 'system') {
    throw DirigentError.fatal(
      ErrorCode.SPACE_READ_ONLY,
      'System space items are immutable; copy the item to the project with load first',
      {
        hint:
          `Load it into the project (\`dirigent load ${request.kind} ${request.itemId} --to project\`, ` +
          'or load with destination "project"), then sign the copy there.',
        details: { itemId: request.itemId, kind: request.kind, space: spaceName },
      },
    );
  }
  const space = request.spaces.find((s) => s.name === spaceName);
  if (space === undefined) {
    throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `There is no ${spaceName} space here.`, {
      hint: 'Sign in the project space or the user space.',
    });
  }
  if (!/[*?]/.test(request.itemId)) {
    const { file } = await resolveIn(request, space, request.itemId);
    const key = await keyOf(request);
    return signOne(request, space, key, request.itemId, file);
  }

  const ids = await matchItemIds(space, request.kind, request.itemId);
  if (ids.length === 0) {
    const where = join(space.root, KIND_DIRS[request.kind]);
    throw DirigentError.fatal(
      NOT_FOUND[request.kind],
      `No ${request.kind} in the ${space.name} space matches "${request.itemId}".`,
      {
        hint: `Looked under ${where}; a pattern without "/" matches at any depth (write "**/x" for the same with folders).`,
        details: { itemId: request.itemId, kind: request.kind },
      },
    );
  }
  const key = await keyOf(request);
  const batch: SignedBatch = {
    status: 'completed',
    signed: [],
    failed: [],
    total: ids.length,
    items: [],
  };
  for (const itemId of ids) {
    try {
      const { file } = await resolveIn(request, space, itemId);
      const signed = await signOne(request, space, key, itemId, file);
      batch.signed.push(itemId);
      batch.items.push(signed);
    } catch (err) {
      const e = DirigentError.from(err);
      const issues = e.details?.issues as ItemIssue[] | undefined;
      batch.failed.push({
        itemId,
        error: { code: e.code, message: e.message, ...(e.hint !== undefined && { hint: e.hint }) },
        ...(issues && { issues }),
      });
    }
  }
  return batch;
}

const NOT_FOUND: Record<ItemKind, string> = {
  directive: ErrorCode.UNKNOWN_DIRECTIVE,
  tool: ErrorCode.UNKNOWN_TOOL,
  knowledge: ErrorCode.UNKNOWN_KNOWLEDGE,
};

function keyOf(request: SignItemsRequest): Promise<SigningKey> {
  return typeof request.key === 'function' ? request.key() : Promise.resolve(request.key);
}

/**
 * The file of `itemId` in `space`. When the space does not hold it, the error names that space
 * (not "any space") and, when another space holds the item, says how to sign it there.
 */
async function resolveIn(
  request: SignItemsRequest,
  space: Space,
  itemId: string,
): Promise<{ file: string }> {
  const { kind } = request;
  const resolver = new ItemResolver(request.spaces);
  try {
    try {
      return await resolver.resolve(kind, itemId, [space]);
    } catch (err) {
      if (DirigentError.from(err).code !== NOT_FOUND[kind]) throw err;
      const others = request.spaces.filter((s) => s.name !== space.name);
      const elsewhere = await resolver.resolve(kind, itemId, others).catch(() => undefined);
      const where = join(space.root, KIND_DIRS[kind]);
      const hint =
        elsewhere === undefined
          ? `Looked in ${where} for ${itemId}{${KIND_EXTENSIONS[kind].join(',')}}.` +
            withoutExtension(kind, itemId)
          : elsewhere.space === 'system'
            ? `It is in the system space (${elsewhere.file}), which is read-only: load it into the ` +
              `project (\`dirigent load ${kind} ${itemId} --to project\`), then sign the copy.`
            : `It is in the ${elsewhere.space} space (${elsewhere.file}): sign it there ` +
              `(--space ${elsewhere.space}).`;
      throw DirigentError.fatal(
        NOT_FOUND[kind],
        `No ${kind} "${itemId}" in the ${space.name} space.`,
        {
          hint,
          details: {
            itemId,
            kind,
            space: space.name,
            ...(elsewhere && { foundIn: elsewhere.space, file: elsewhere.file }),
          },
        },
      );
    }
  } finally {
    resolver.close();
  }
}

/** A hint for an item id written with its file's extension, which item ids leave out. */
function withoutExtension(kind: ItemKind, itemId: string): string {
  const ext = KIND_EXTENSIONS[kind].find((e) => itemId.endsWith(e));
  return ext === undefined
    ? ''
    : ` Item ids have no extension: try ${kind} ${itemId.slice(0, -ext.length)}.`;
}

async function signOne(
  request: SignItemsRequest,
  space: Space,
  key: SigningKey,
  itemId: string,
  file: string,
): Promise<SignedItem> {
  const text = await readFile(file, 'utf8');
  const issues = await validateItem(request.kind, itemId, file, text, request.projectDir);
  const errors = issues.filter((i) => i.severity !== 'warning');
  if (errors.length > 0) {
    const first = errors[0]!;
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
    throw DirigentError.fatal(
      ErrorCode.INVALID_ITEM,
      `${request.kind} ${itemId} is not valid, so it was not signed: ${first.message}${more}`,
      {
        location: first.location ?? { file, line: 1, column: 1 },
        hint: first.hint ?? 'Fix the item, then sign it again.',
        details: {
          itemId,
          file,
          kind: request.kind,
          issues: errors,
          // Every issue, in the form error printers list (`diagnosticsOf`).
          diagnostics: errors.map((i) => ({
            severity: 'error',
            code: ErrorCode.INVALID_ITEM,
            message: i.message,
            loc: i.location ?? { file, line: 1, column: 1 },
            hint: i.hint,
          })),
        },
      },
    );
  }
  // Whole: what a person signs must not change unnoticed, even where RYE's older hash allows it.
  const signed = await signItem(file, request.kind, key, {
    ...(request.now && { now: request.now }),
    wholeFile: true,
  });
  return {
    status: 'signed',
    itemId,
    file,
    space: space.name,
    signature: {
      timestamp: signed.timestamp,
      hash: signed.hash,
      keyId: signed.keyId,
      format: signed.format,
    },
    warnings: [
      ...issues.filter((i) => i.severity === 'warning').map((i) => i.message),
      ...signed.warnings,
    ],
  };
}

/** The item ids under `space`'s folder for `kind` that `pattern` matches, sorted. */
async function matchItemIds(space: Space, kind: ItemKind, pattern: string): Promise<string[]> {
  const root = join(space.root, KIND_DIRS[kind]);
  const glob = pattern.includes('/') ? pattern : `**/${pattern}`;
  const isMatch = picomatch(glob, { dot: false });
  const extensions = KIND_EXTENSIONS[kind];
  const ids = new Set<string>();
  for (const file of await filesUnder(root)) {
    const rel = relative(root, file).split(sep).join('/');
    if (kind === 'tool' && rel === 'enabled.json') continue;
    const ext = extensions.find((e) => rel.endsWith(e));
    if (ext === undefined) continue;
    const itemId = rel.slice(0, -ext.length);
    if (isMatch(itemId)) ids.add(itemId);
  }
  return [...ids].sort();
}

/** The files under `dir`, skipping names that start with `.` or `_`; none when it is absent. */
async function filesUnder(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const files: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith('.') || entry.name.startsWith('_')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await filesUnder(path)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

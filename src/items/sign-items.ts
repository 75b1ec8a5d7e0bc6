/**
 * RYE's `sign` (reference §5.6): find an item, or every item a glob matches, in one space (project
 * or user; the system space is read-only), validate it, and sign it in place with the user's key.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DirigentError, isDirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { ItemIssue } from './item-issue.js';
import { KIND_DIRS, KIND_EXTENSIONS, type ItemKind } from './item-kind.js';
import { ItemResolver } from './item-resolver.js';
import { matchItemIds } from './match-item-ids.js';
import type { SignItemsRequest } from './sign-items-request.js';
import type { SignedBatch, SignedItem } from './signed-item.js';
import { signItem, type SigningKey } from './signing/sign-item.js';
import type { Space } from './space.js';
import { validateItem } from './validate-item.js';
import {
  itemNotFound,
  itemNotFoundCode,
  noSuchSpace,
  systemSpaceReadOnly,
} from '../errors/item-errors.js';
import { ignoreCode } from '../errors/ignore-expected.js';

export type { SignItemsRequest } from './sign-items-request.js';
export type { FailedItem, SignedBatch, SignedItem } from './signed-item.js';

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
    throw systemSpaceReadOnly(
      `Cannot sign ${request.kind} "${request.itemId}" in place`,
      `Load it into the project (\`dirigent load ${request.kind} ${request.itemId} --to project\`, ` +
        'or load with destination "project"), then sign the copy there.',
      { itemId: request.itemId, kind: request.kind, space: spaceName },
    );
  }
  const space = request.spaces.find((s) => s.name === spaceName);
  if (space === undefined) {
    throw noSuchSpace(spaceName, 'Sign in the project space or the user space.');
  }
  if (!/[*?]/.test(request.itemId)) {
    const { file } = await resolveIn(request, space, request.itemId);
    const key = await keyOf(request);
    return signOne(request, space, key, request.itemId, file);
  }

  const ids = await matchItemIds(space, request.kind, request.itemId);
  if (ids.length === 0) {
    const where = join(space.root, KIND_DIRS[request.kind]);
    throw itemNotFound(request.kind, request.itemId, {
      in: `the ${space.name} space`,
      pattern: true,
      hint: `Looked under ${where}; a pattern without "/" matches at any depth (write "**/x" for the same with folders).`,
    });
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

/** The signing key of `request`, read now if it is given as a function. */
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
      if (!isDirigentError(err, itemNotFoundCode(kind))) throw err;
      const others = request.spaces.filter((s) => s.name !== space.name);
      const elsewhere = await resolver
        .resolve(kind, itemId, others)
        .catch(ignoreCode(itemNotFoundCode(kind)));
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
      throw itemNotFound(kind, itemId, {
        in: `the ${space.name} space`,
        hint,
        details: {
          space: space.name,
          ...(elsewhere && { foundIn: elsewhere.space, file: elsewhere.file }),
        },
      });
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

/** Validates the item `itemId` of `space` (its file `file`) and signs it in place with `key`. */
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

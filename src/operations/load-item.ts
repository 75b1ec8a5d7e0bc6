/**
 * `load`: an item's content, verified first, from whichever space holds it (or one named); and,
 * given a destination space, a byte-for-byte copy there, signature intact (RYE reference §6,
 * "load"). The system space is read-only: an item is copied out of it, never into it.
 */
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { KIND_DIRS, type ItemKind } from '../items/item-kind.js';
import type { ItemResolver } from '../items/item-resolver.js';
import { summarizeItem, type ItemFields } from '../items/item-summary.js';
import type { TrustStore } from '../items/signing/trust-store.js';
import { verifyItemText, type Verification } from '../items/signing/verify-item.js';
import type { SpaceName } from '../items/space.js';
import { noSuchSpace, systemSpaceReadOnly } from '../errors/item-errors.js';
import { ignoreMissing } from '../errors/ignore-expected.js';

/** What `load` takes. */
export interface LoadRequest {
  kind: ItemKind;
  itemId: string;
  /** Look in this space only (default: project, then user, then system). */
  source?: SpaceName;
  /** Copy the item into this space (omitted, or the space it was found in: read only). */
  destination?: SpaceName;
  /** Replace a different item already at the destination (default: refuse with `ITEM_EXISTS`). */
  overwrite?: boolean;
}

/** What `load` answers. */
export interface LoadedItem {
  kind: ItemKind;
  itemId: string;
  space: SpaceName;
  file: string;
  /** The file's text, as it is on disk. */
  content: string;
  /** Its descriptive fields (name, title, description, category, version, tags…). */
  metadata: Omit<ItemFields, 'content'>;
  /** Where its signature stands (`verified`, `untrusted` or `unsigned`; others are refused). */
  signature: Pick<Verification, 'status' | 'keyId' | 'owner' | 'signedAt'>;
  warnings: string[];
  /** Where the copy went, when a destination was given. */
  copiedTo?: { space: SpaceName; file: string; unchanged: boolean };
}

/**
 * Loads (and copies) an item. Throws `UNKNOWN_*` when no space (or not `source`) holds it,
 * signature errors as the project's policy says (a changed signed item always), and
 * `SPACE_READ_ONLY` for a copy into the system space, `ITEM_EXISTS` for one onto a different item.
 */
export async function loadItem(
  request: LoadRequest,
  items: ItemResolver,
  verify: { trust: TrustStore; requireSignatures: boolean },
): Promise<LoadedItem> {
  const { kind, itemId, source, destination } = request;
  if (destination === 'system') throw readOnly(kind, itemId);
  const spaces =
    source === undefined ? items.spaces : items.spaces.filter((s) => s.name === source);
  const found = await items.resolve(kind, itemId, spaces);
  const content = await readFile(found.file, 'utf8');
  const verification = await verifyItemText(content, found.file, kind, {
    ...verify,
    space: found.space,
  });
  const metadata: Partial<ItemFields> = summarizeItem(kind, itemId, found.file, content);
  delete metadata.content;
  const loaded: LoadedItem = {
    kind,
    itemId,
    space: found.space,
    file: found.file,
    content,
    metadata: metadata as LoadedItem['metadata'],
    signature: {
      status: verification.status,
      ...(verification.keyId !== undefined && { keyId: verification.keyId }),
      ...(verification.owner !== undefined && { owner: verification.owner }),
      ...(verification.signedAt !== undefined && { signedAt: verification.signedAt }),
    },
    warnings: verification.warnings,
  };
  if (destination === undefined || destination === found.space) return loaded;
  const space = items.spaces.find((s) => s.name === destination);
  if (space === undefined) throw noSuchSpace(destination, 'Copy into "project" or "user".');
  const target = join(space.root, KIND_DIRS[kind], ...itemId.split('/')) + extname(found.file);
  const existing = await readFile(target, 'utf8').catch(ignoreMissing);
  if (existing !== undefined && existing !== content && request.overwrite !== true)
    throw DirigentError.fatal(
      ErrorCode.ITEM_EXISTS,
      `The ${destination} space already holds a different ${kind} "${itemId}" (${target}).`,
      {
        hint: 'Load that one to compare, remove it, or copy with overwrite to replace it.',
        details: { file: target },
      },
    );
  if (existing !== content) {
    await mkdir(dirname(target), { recursive: true });
    await copyFile(found.file, target);
  }
  loaded.copiedTo = { space: destination, file: target, unchanged: existing === content };
  return loaded;
}

function readOnly(kind: ItemKind, itemId: string): DirigentError {
  return systemSpaceReadOnly(
    `Cannot copy ${kind} "${itemId}" into the system space`,
    'Copy it into the project (destination "project") or your user space ("user").',
  );
}

/**
 * item_id → file, across the project, user and system spaces (RYE reference §3.5): the first
 * space holding the item wins and shadows the others. Results are cached; the cache is dropped
 * whenever a file changes in a space (recursive fs watchers, which never keep the process alive).
 */
import { watch, type FSWatcher } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { KIND_DIRS, KIND_EXTENSIONS, type ItemKind } from './item-kind.js';
import type { Space, SpaceName } from './space.js';
import { itemNotFound } from '../errors/item-errors.js';

/** Which file an item id resolved to, and what it shadows. */
export interface Resolution {
  kind: ItemKind;
  itemId: string;
  file: string;
  space: SpaceName;
  /** Files of the same item in lower spaces, hidden by this one. */
  shadowed: { space: SpaceName; file: string }[];
  /** Other files of the same item in the winning space (another extension), not used. */
  alsoFound: string[];
}

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** Resolves item ids in a list of spaces, highest first. */
export class ItemResolver {
  private readonly cache = new Map<string, Resolution>();
  private watchers: FSWatcher[] = [];
  private changes = 0;

  constructor(readonly spaces: readonly Space[]) {}

  /**
   * The file of `itemId`. Throws `INVALID_ITEM_ID` for an id that is absolute, contains `..`, or
   * lands outside its space (through a symlink), and `UNKNOWN_TOOL` / `UNKNOWN_DIRECTIVE` /
   * `UNKNOWN_KNOWLEDGE` when no space holds it.
   */
  async resolve(
    kind: ItemKind,
    itemId: string,
    spaces: readonly Space[] = this.spaces,
  ): Promise<Resolution> {
    checkItemId(itemId);
    const key = `${kind}\0${itemId}\0${spaces.map((s) => s.name).join(',')}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const found: { space: Space; file: string }[] = [];
    for (const space of spaces) {
      for (const ext of KIND_EXTENSIONS[kind]) {
        const file = join(space.root, KIND_DIRS[kind], ...itemId.split('/')) + ext;
        if (await isFile(file)) found.push({ space, file });
      }
    }
    const winner = found[0];
    if (winner === undefined) {
      const where = spaces.map((s) => `${s.name} (${join(s.root, KIND_DIRS[kind])})`).join(', ');
      throw itemNotFound(kind, itemId, {
        hint: `Looked in ${where} for ${itemId}{${KIND_EXTENSIONS[kind].join(',')}}.`,
      });
    }
    await checkInside(winner.file, winner.space, itemId);
    const resolution: Resolution = {
      kind,
      itemId,
      file: winner.file,
      space: winner.space.name,
      shadowed: found
        .filter((f) => f.space !== winner.space)
        .map((f) => ({ space: f.space.name, file: f.file })),
      alsoFound: found
        .filter((f) => f.space === winner.space && f.file !== winner.file)
        .map((f) => f.file),
    };
    this.watchSpaces();
    this.cache.set(key, resolution);
    return resolution;
  }

  /** Drops cached resolutions (done automatically when a file in a space changes). */
  invalidate(): void {
    this.cache.clear();
    this.changes++;
  }

  /**
   * Counts the changes seen in the spaces since this resolver first resolved an item (from then
   * on it watches them): what was derived from their files while it stays the same is current.
   */
  get generation(): number {
    return this.changes;
  }

  /** Stops watching the spaces. */
  close(): void {
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }

  /**
   * Watches every space (or, for one that does not exist yet, the folder it will appear in) from
   * now on, so that {@link generation} counts every change; resolving an item starts this too.
   */
  watchSpaces(): void {
    if (this.watchers.length > 0) return;
    for (const space of this.spaces) {
      for (const [dir, recursive] of [
        [space.root, true],
        [dirname(space.root), false],
      ] as const) {
        try {
          const w = watch(dir, { recursive, persistent: false }, () => this.invalidate());
          w.on('error', () => this.invalidate());
          this.watchers.push(w);
          break;
        } catch {
          // the folder does not exist: try its parent, or give up on this space (nothing to see)
        }
      }
    }
  }
}

/** Refuses ids that could name a file outside their space. */
export function checkItemId(itemId: string): void {
  const segments = itemId.split('/');
  if (
    itemId.startsWith('/') ||
    /^[A-Za-z]:/.test(itemId) ||
    itemId.includes('\\') ||
    !segments.every((s) => SEGMENT.test(s) && s !== '..')
  ) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_ITEM_ID,
      `"${itemId}" is not a valid item id: ids are relative paths of names, without "..".`,
      {
        hint: 'Write the path under .ai/<kind>s/ without its extension, e.g. "rye/bash/bash".',
      },
    );
  }
}

async function checkInside(file: string, space: Space, itemId: string): Promise<void> {
  const [real, root] = await Promise.all([realpath(file), realpath(space.root)]);
  const rel = relative(root, real);
  if (rel.startsWith('..') || rel.startsWith(sep) || rel === '') {
    throw DirigentError.fatal(
      ErrorCode.INVALID_ITEM_ID,
      `Item "${itemId}" resolves outside the ${space.name} space (${real}).`,
      {
        hint: 'Items may not be symbolic links that leave their space.',
      },
    );
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Every item of a project's spaces (directives, tools, knowledge), shadowed ones included, with
 * what search and listings show: descriptive fields, signature state, which item shadows which.
 * Files are read once and again only when they change (the resolver's watchers say when anything
 * in a space changed; a file's size and modification time say which).
 */
import type { Dirent } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { KIND_DIRS, KIND_EXTENSIONS, type ItemKind } from './item-kind.js';
import type { ItemResolver } from './item-resolver.js';
import { summarizeItem, type ItemFields } from './item-summary.js';
import { normalizeLineEndings, signedContentHash } from './signing/content-hash.js';
import { readSignatureLine, signatureStyleFor } from './signing/signature-line.js';
import type { TrustStore, TrustedKey } from './signing/trust-store.js';
import { signatureValid } from './signing/verify-item.js';
import type { SpaceName } from './space.js';

/**
 * Where an item's signature stands: `verified` (signed, unchanged, by a trusted key), `untrusted`
 * (signed and unchanged, by a key not trusted here), `unsigned`, `tampered` (changed since it was
 * signed), `forged` (the signature does not verify against the trusted key it names), `builtin`
 * (a tool built into Dirigent, with no file).
 */
export type SignatureState =
  | 'verified'
  | 'untrusted'
  | 'unsigned'
  | 'tampered'
  | 'forged'
  | 'builtin';

/** One item of one space. */
export interface CatalogItem extends ItemFields {
  kind: ItemKind;
  itemId: string;
  space: SpaceName;
  /** Its file; absent for built-in tools. */
  file?: string;
  /** When its file last changed (epoch ms; 0 for built-in tools). */
  modifiedAt: number;
  signature: { state: SignatureState; keyId?: string; signedAt?: string; owner?: string };
  /** The higher space whose item of the same kind and id is used instead of this one. */
  shadowedBy?: SpaceName;
  /** The lower spaces whose item of the same kind and id this one hides. */
  shadows: SpaceName[];
}

const KINDS: readonly ItemKind[] = ['directive', 'tool', 'knowledge'];
const SKIPPED_DIRS = new Set(['node_modules', '__pycache__', '.git', '.venv']);

/** What a file's text gave, kept while the file stays the same. */
interface FileEntry {
  mtimeMs: number;
  size: number;
  fields: ItemFields;
  /** The signature line's fields, and whether the content still hashes to them. */
  signed?: { keyId: string; hash: string; signature: string; signedAt: string; intact: boolean };
}

/** See the module comment. */
export class ItemCatalog {
  private readonly files = new Map<string, FileEntry>();
  private snapshot: { generation: number; items: CatalogItem[] } | undefined;
  private scanning: Promise<CatalogItem[]> | undefined;

  constructor(
    private readonly resolver: ItemResolver,
    private readonly trust: TrustStore,
    private readonly builtins: readonly ToolDefinition[] = [],
  ) {}

  /**
   * Every item of every space, in space order (project, user, system), then kind and item id.
   * Current as of the call: a file changed on disk is read again.
   */
  async items(): Promise<CatalogItem[]> {
    this.resolver.watchSpaces();
    const generation = this.resolver.generation;
    if (this.snapshot?.generation === generation) return this.snapshot.items;
    this.scanning ??= this.scan().finally(() => (this.scanning = undefined));
    const items = await this.scanning;
    // A change during the scan leaves the generation moved on: the next call scans again.
    this.snapshot = { generation, items };
    return items;
  }

  private async scan(): Promise<CatalogItem[]> {
    const items: CatalogItem[] = [];
    const seen = new Set<string>();
    const keys = new Map<string, Promise<TrustedKey | undefined>>();
    const winners = new Map<string, CatalogItem>();
    for (const space of this.resolver.spaces) {
      for (const kind of KINDS) {
        const dir = join(space.root, KIND_DIRS[kind]);
        const found = await itemFiles(dir, KIND_EXTENSIONS[kind]);
        for (const { itemId, file } of found) {
          seen.add(file);
          const entry = await this.entry(kind, itemId, file);
          if (entry === undefined) continue;
          const item: CatalogItem = {
            ...entry.fields,
            kind,
            itemId,
            space: space.name,
            file,
            modifiedAt: entry.mtimeMs,
            signature: await this.signatureOf(entry, keys),
            shadows: [],
          };
          const key = `${kind}\0${itemId}`;
          const winner = winners.get(key);
          if (winner === undefined) winners.set(key, item);
          else {
            item.shadowedBy = winner.space;
            winner.shadows.push(item.space);
          }
          items.push(item);
        }
      }
      if (space.name === 'system') items.push(...this.builtinItems(winners));
    }
    for (const file of this.files.keys()) if (!seen.has(file)) this.files.delete(file);
    return items;
  }

  /** The file's entry, read again when it changed; `undefined` when it is gone or unreadable. */
  private async entry(
    kind: ItemKind,
    itemId: string,
    file: string,
  ): Promise<FileEntry | undefined> {
    let info;
    try {
      info = await stat(file);
    } catch {
      return undefined;
    }
    const known = this.files.get(file);
    if (known !== undefined && known.mtimeMs === info.mtimeMs && known.size === info.size)
      return known;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      return undefined;
    }
    const entry: FileEntry = {
      mtimeMs: info.mtimeMs,
      size: info.size,
      fields: summarizeItem(kind, itemId, file, text),
    };
    const line = readSignatureLine(normalizeLineEndings(text), signatureStyleFor(file));
    if (line?.kind === 'signed') {
      const { keyId, hash, signature, timestamp } = line.signature;
      const intact = signedContentHash(text, kind, file).hash === hash;
      entry.signed = { keyId, hash, signature, signedAt: timestamp, intact };
    }
    this.files.set(file, entry);
    return entry;
  }

  private async signatureOf(
    entry: FileEntry,
    keys: Map<string, Promise<TrustedKey | undefined>>,
  ): Promise<CatalogItem['signature']> {
    const signed = entry.signed;
    if (signed === undefined) return { state: 'unsigned' };
    const base = { keyId: signed.keyId, signedAt: signed.signedAt };
    if (!signed.intact) return { state: 'tampered', ...base };
    let key = keys.get(signed.keyId);
    if (key === undefined) {
      key = this.trust.get(signed.keyId);
      keys.set(signed.keyId, key);
    }
    const trusted = await key;
    if (trusted === undefined) return { state: 'untrusted', ...base };
    if (!signatureValid(signed.hash, signed.signature, trusted.publicKey))
      return { state: 'forged', ...base };
    return { state: 'verified', ...base, ...(trusted.owner !== '' && { owner: trusted.owner }) };
  }

  /** Tools built into Dirigent: system items without a file, shadowed like any other. */
  private builtinItems(winners: Map<string, CatalogItem>): CatalogItem[] {
    return this.builtins.map((tool) => {
      const slash = tool.itemId.lastIndexOf('/');
      const item: CatalogItem = {
        kind: 'tool',
        itemId: tool.itemId,
        space: 'system',
        name: tool.itemId.slice(slash + 1),
        description: tool.description,
        category: tool.itemId.slice(0, slash),
        type: 'builtin',
        tags: [],
        content: '',
        modifiedAt: 0,
        signature: { state: 'builtin' },
        shadows: [],
      };
      const winner = winners.get(`tool\0${tool.itemId}`);
      if (winner !== undefined) {
        item.shadowedBy = winner.space;
        winner.shadows.push('system');
      }
      return item;
    });
  }
}

/**
 * The items under `dir`: files with one of `extensions`, the first extension winning where an
 * item has several; names starting with `_` or `.` are skipped, as in RYE.
 */
async function itemFiles(
  dir: string,
  extensions: readonly string[],
): Promise<{ itemId: string; file: string }[]> {
  const byId = new Map<string, { file: string; rank: number }>();
  const walk = async (folder: string, prefix: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name.startsWith('_') || e.name.startsWith('.')) continue;
      if (e.isDirectory()) {
        if (!SKIPPED_DIRS.has(e.name)) await walk(join(folder, e.name), `${prefix}${e.name}/`);
        continue;
      }
      if (!e.isFile() && !(e.isSymbolicLink() && (await linksInside(join(folder, e.name), dir))))
        continue;
      const rank = extensions.findIndex((ext) => e.name.endsWith(ext));
      if (rank === -1) continue;
      const itemId = prefix + e.name.slice(0, -extensions[rank]!.length);
      const known = byId.get(itemId);
      if (known === undefined || rank < known.rank)
        byId.set(itemId, { file: join(folder, e.name), rank });
    }
  };
  await walk(dir, '');
  return [...byId]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([itemId, { file }]) => ({ itemId, file }));
}

/** Whether a symbolic link names a file inside `root` (one that leaves it is not an item). */
async function linksInside(link: string, root: string): Promise<boolean> {
  try {
    const [target, base] = await Promise.all([realpath(link), realpath(root)]);
    const rel = relative(base, target);
    return (
      rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep) && (await stat(target)).isFile()
    );
  } catch {
    return false;
  }
}

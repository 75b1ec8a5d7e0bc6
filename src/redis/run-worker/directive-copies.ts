/**
 * This worker's copies of the directives that run jobs name, remembered: where each directive
 * resolves in the project (for a second at most, so a file added to a space is seen at once), and
 * each copy's verified and compiled form by file, modification time and size (one `stat` per run
 * instead of a lookup through every space, a read, a hash and a signature check).
 */
import { readFile, stat } from 'node:fs/promises';
import { contentHash } from '../../directive/parse-directive.js';
import type { DirectiveLoader, LoadedDirective } from '../../engine/directive-loader.js';
import { isDirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { ignoreMissing } from '../../errors/ignore-expected.js';

/** How long where a directive resolves is remembered. */
const RESOLVED_MS = 1000;
/** Copies remembered at most (the least recently stored go first). */
const MAX_COPIES = 500;

/** A copy of a directive in the project: its file, text, content hash and loaded form. */
export interface DirectiveCopy {
  file: string;
  hash: string;
  loaded: Promise<LoadedDirective>;
}

/** The copies of one project's loader. */
export class DirectiveCopies {
  /** Where each directive resolves, by item id: a lookup under way is shared by every run. */
  private readonly resolved = new Map<string, { file: Promise<string | undefined>; at: number }>();
  private readonly copies = new Map<string, { stamp: string; copy: DirectiveCopy }>();
  /** Verified forms of texts this project does not hold, by file and content hash. */
  private readonly texts = new Map<string, Promise<LoadedDirective>>();

  constructor(private readonly loader: DirectiveLoader) {}

  /** The project's copy of directive `itemId`, or undefined when no space holds one. */
  async copyOf(itemId: string): Promise<DirectiveCopy | undefined> {
    const file = await this.fileOf(itemId);
    if (file === undefined) return undefined;
    const s = await stat(file).catch(ignoreMissing);
    if (s === undefined) {
      this.resolved.delete(itemId); // gone since: look again
      return this.copyOf(itemId);
    }
    const stamp = `${s.mtimeMs}:${s.size}`;
    const known = this.copies.get(file);
    if (known?.stamp === stamp) return known.copy;
    const text = await readFile(file, 'utf8');
    const copy = { file, hash: contentHash(text), loaded: this.loader.verified(file, text) };
    copy.loaded.catch(() => this.copies.delete(file));
    remember(this.copies, file, { stamp, copy });
    return copy;
  }

  /** The verified form of a text this project does not hold, as if it were at `file`. */
  verifiedText(file: string, text: string, hash: string): Promise<LoadedDirective> {
    const key = `${file}\n${hash}`;
    let loaded = this.texts.get(key);
    if (loaded === undefined) {
      loaded = this.loader.verified(file, text);
      loaded.catch(() => this.texts.delete(key));
      remember(this.texts, key, loaded);
    }
    return loaded;
  }

  private fileOf(itemId: string): Promise<string | undefined> {
    const known = this.resolved.get(itemId);
    if (known !== undefined && Date.now() - known.at < RESOLVED_MS) return known.file;
    const file = this.loader.items.resolve('directive', itemId).then(
      (found) => found.file,
      (err: unknown) => {
        if (isDirigentError(err, ErrorCode.UNKNOWN_DIRECTIVE)) return undefined;
        this.resolved.delete(itemId);
        throw err;
      },
    );
    remember(this.resolved, itemId, { file, at: Date.now() });
    return file;
  }
}

function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_COPIES) map.delete(map.keys().next().value as K);
}

/**
 * This worker's copies of the directives that run jobs name, remembered: where each directive
 * resolves in the project (for a second at most, so a file added to a space is seen at once), and
 * each copy's verified and compiled form by file, modification time and size: a `stat` instead of
 * a lookup through every space, a read, a hash and a signature check; one `stat` shared by the runs
 * taken up within {@link STAT_MS} of each other, as if they had been taken up together.
 */
import { readFile, stat } from 'node:fs/promises';
import { contentHash } from '../../directive/parse-directive.js';
import type { DirectiveLoader, LoadedDirective } from '../../engine/directive-loader.js';
import { isDirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { ignoreMissing } from '../../errors/ignore-expected.js';

/** How long where a directive resolves is remembered. */
const RESOLVED_MS = 1000;
/** How long a file's `stat` serves the runs that need it. */
const STAT_MS = 100;
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
  /** Each file's last `stat` (its stamp, or undefined when missing), shared for {@link STAT_MS}. */
  private readonly stats = new Map<string, { stamp: Promise<string | undefined>; at: number }>();
  /** Verified forms of texts this project does not hold, by file and content hash. */
  private readonly texts = new Map<string, Promise<LoadedDirective>>();

  constructor(private readonly loader: DirectiveLoader) {}

  /**
   * The project's copy of directive `itemId`, or undefined when no space holds one; `fresh`: as
   * the file is now, not as a `stat` of the last {@link STAT_MS} saw it.
   */
  async copyOf(itemId: string, fresh = false): Promise<DirectiveCopy | undefined> {
    const file = await this.fileOf(itemId);
    if (file === undefined) return undefined;
    if (fresh) this.stats.delete(file);
    const stamp = await this.stampOf(file);
    if (stamp === undefined) {
      this.resolved.delete(itemId); // gone since: look again
      this.stats.delete(file);
      return this.copyOf(itemId);
    }
    const known = this.copies.get(file);
    if (known?.stamp === stamp) return known.copy;
    const text = await readFile(file, 'utf8');
    const copy = { file, hash: contentHash(text), loaded: this.loader.verified(file, text) };
    copy.loaded.catch(() => this.copies.delete(file));
    remember(this.copies, file, { stamp, copy });
    return copy;
  }

  /** The file's modification time and size, or undefined when it is missing: see {@link STAT_MS}. */
  private stampOf(file: string): Promise<string | undefined> {
    const now = Date.now();
    const known = this.stats.get(file);
    if (known !== undefined && now - known.at < STAT_MS) return known.stamp;
    const stamp = stat(file).then(
      (s) => `${s.mtimeMs}:${s.size}`,
      (err: unknown) => ignoreMissing(err),
    );
    remember(this.stats, file, { stamp, at: now });
    return stamp;
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

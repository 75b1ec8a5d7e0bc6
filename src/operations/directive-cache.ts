import { stat } from 'node:fs/promises';
import type { DirectiveLoader, LoadedDirective } from '../engine/directive-loader.js';
import { ignoreMissing } from '../errors/ignore-expected.js';

/** Directives kept loaded by item id (see {@link DirectiveCache.load}). */
const LOADED_LIMIT = 500;

/**
 * Directives read, verified, compiled and checked once while their files stay as they were: by item id,
 * while the resolver (which watches the spaces) sees no change; by file, while its size and
 * modification time stay the same. A start then costs at most one stat.
 */
export class DirectiveCache {
  /** Directives loaded, by item id (or `\0` and file), with what says they are current. */
  private readonly loaded = new Map<string, { loaded: LoadedDirective; stamp: string }>();

  constructor(private readonly loader: DirectiveLoader) {}

  /**
   * The directive `directive` names (an item id, or with `allowFile` a file too), read, verified,
   * compiled and checked against the project (`DirectiveLoader.checked`: its tools and child
   * directives resolve, its parameters fit them): `UNKNOWN_DIRECTIVE`, `INVALID_ITEM_ID`,
   * signature errors and the directive's own located errors otherwise.
   */
  async load(directive: string, allowFile = false): Promise<LoadedDirective> {
    let file: string | undefined;
    let stamp: string;
    let key = directive;
    if (allowFile) {
      file = await this.loader.resolve(directive);
      // Gone since it resolved: the load below says so.
      const info = await stat(file).catch(ignoreMissing);
      stamp = `${info?.mtimeMs}:${info?.size}`;
      key = `\0${file}`;
    } else stamp = String(this.loader.items.generation);
    const known = this.loaded.get(key);
    if (known !== undefined && known.stamp === stamp) return known.loaded;
    file ??= (await this.loader.items.resolve('directive', directive)).file;
    const loaded = await this.loader.checked(await this.loader.loadFile(file));
    if (this.loaded.size >= LOADED_LIMIT) this.loaded.delete(this.loaded.keys().next().value!);
    this.loaded.set(key, { loaded, stamp });
    return loaded;
  }
}

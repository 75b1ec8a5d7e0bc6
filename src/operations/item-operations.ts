/**
 * The item interface (seed 001, RYE reference §6): `search`, `load`, `execute` and `sign` over
 * directives, tools and knowledge in the project's, the user's and the system space. The CLI,
 * the HTTP API and the MCP server call these and only translate (DESIGN.md, "One set of
 * operations, several faces").
 *
 * ```ts
 * const dirigent = await Dirigent.open({ project: '.' });
 * const { results } = await dirigent.items.search({ query: 'deploy', kinds: ['directive'] });
 * const done = await dirigent.items.execute({ kind: 'directive', itemId: results[0].itemId });
 * ```
 */
import { readFile } from 'node:fs/promises';
import type { DirectiveLoader } from '../engine/directive-loader.js';
import type { EngineObserver } from '../engine/engine-options.js';
import type { RunRecord } from '../engine/run-record.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { ItemCatalog } from '../items/item-catalog.js';
import type { ItemKind } from '../items/item-kind.js';
import { parseKnowledge } from '../items/knowledge-item.js';
import type { SignedBatch, SignedItem } from '../items/sign-items.js';
import { TrustStore } from '../items/signing/trust-store.js';
import { verifyItemText } from '../items/signing/verify-item.js';
import type { SpaceName } from '../items/space.js';
import type { ItemIndex } from '../search/item-index.js';
import type { SearchPage } from '../search/search-page.js';
import type { SearchRequest } from '../search/search-request.js';
import { BUILTIN_TOOLS } from '../tools/builtin/index.js';
import type { ItemDispatcher } from '../tools/item-dispatcher.js';
import { builtinToolItem } from './builtin-tool-item.js';
import type { Executed, ExecuteRequest } from './execute-request.js';
import { checkKind } from './item-kinds.js';
import { loadItem, type LoadedItem, type LoadRequest } from './load-item.js';
import type { StartedRun, StartRequest } from './start-request.js';
import { runNotWaiting } from '../errors/run-errors.js';

export type { Executed, ExecuteRequest } from './execute-request.js';
export { ITEM_KINDS } from './item-kinds.js';

/**
 * What the item operations run on: the project's loader and the run operations (a `Dirigent`).
 */
export interface ItemHost {
  readonly projectDir: string;
  readonly loader: Pick<DirectiveLoader, 'items' | 'policy' | 'requireSignatures'>;
  check(directive: string, inputs?: Record<string, unknown>): Promise<Record<string, unknown>>;
  start(request: StartRequest): Promise<StartedRun>;
  run(request: StartRequest): Promise<RunRecord>;
  get(runId: string): Promise<RunRecord>;
  signal(
    runId: string,
    name: string,
    payload: unknown,
    options?: { observer?: EngineObserver },
  ): Promise<RunRecord>;
}

/** What `sign` takes. */
export interface SignRequest {
  kind: ItemKind;
  /** An item id, or a glob of item ids (`*`, `?`). */
  itemId: string;
  /** `project` (default) or `user`; the system space is refused (`SPACE_READ_ONLY`). */
  space?: SpaceName;
}

/** See the module comment. */
export class ItemOperations {
  private catalogInstance: ItemCatalog | undefined;
  /** Made at the first search: a process that never searches never loads the index. */
  private index: Promise<ItemIndex> | undefined;
  private dispatcher: ItemDispatcher | undefined;
  private readonly trust: TrustStore;

  constructor(private readonly dirigent: ItemHost) {
    this.trust = new TrustStore(dirigent.loader.items.spaces);
  }

  /** Every item of the project's spaces, kept current as files change. */
  get catalog(): ItemCatalog {
    this.catalogInstance ??= new ItemCatalog(this.dirigent.loader.items, this.trust, BUILTIN_TOOLS);
    return this.catalogInstance;
  }

  /** Whether unsigned items and untrusted keys are refused (the project's policy). */
  private get requireSignatures(): boolean {
    return this.dirigent.loader.requireSignatures;
  }

  /**
   * One page of the items matching `request`, ranked (see `ItemIndex`): the index follows the
   * catalog, so an item written, edited or removed is found as it now is.
   *
   * @throws DirigentError `INVALID_QUERY` for a malformed query, `INVALID_REQUEST` for a bad
   *   filter, sort, limit or offset.
   */
  async search(request: SearchRequest = {}): Promise<SearchPage> {
    this.index ??= import('../search/item-index.js').then(
      ({ ItemIndex }) => new ItemIndex(this.catalog),
    );
    return (await this.index).search(request);
  }

  /**
   * Validates and signs an item, or each item a glob matches, in the project or user space with
   * the user's signing key (`signingKeyDir`). See `signItems` for the outcome and the errors;
   * `NO_SIGNING_KEY` when there is no key.
   */
  async sign(request: SignRequest): Promise<SignedItem | SignedBatch> {
    checkKind(request.kind);
    const projectDir = this.dirigent.projectDir;
    const [{ signItems }, { readSigningKey, signingKeyDir }] = await Promise.all([
      import('../items/sign-items.js'),
      import('../items/signing/key-ring.js'),
    ]);
    return signItems({
      kind: request.kind,
      itemId: request.itemId,
      ...(request.space !== undefined && { space: request.space }),
      spaces: this.dirigent.loader.items.spaces,
      projectDir,
      // Read once the item is found: an unknown item or the system space is said first.
      key: () => readSigningKey(signingKeyDir(projectDir)),
    });
  }

  /**
   * An item's content, verified, from the first space holding it (or `source`); with a
   * `destination`, copied there byte for byte (see `load-item.ts`).
   */
  async load(request: LoadRequest): Promise<LoadedItem> {
    checkKind(request.kind);
    try {
      return await loadItem(request, this.dirigent.loader.items, {
        trust: this.trust,
        requireSignatures: this.requireSignatures,
      });
    } catch (err) {
      const builtin = builtinToolItem(request, err);
      if (builtin === undefined) throw err;
      return builtin;
    }
  }

  /**
   * Runs an item: a tool in this process, a directive as a run (embedded or on the deployment's
   * workers), and a knowledge entry returns its content. With `dryRun`, checks only. With
   * `resume`, answers a directive run that waits.
   */
  async execute(request: ExecuteRequest): Promise<Executed> {
    checkKind(request.kind);
    const parameters = request.parameters ?? {};
    if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters))
      throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, 'parameters must be a JSON object.', {
        hint: 'Pass the tool\'s parameters or the directive\'s inputs by name: {"name": "Ada"}.',
      });
    const dryRun = request.dryRun === true;
    switch (request.kind) {
      case 'knowledge':
        return this.knowledge(request.itemId, dryRun);
      case 'tool':
        return this.tool(request.itemId, parameters, dryRun);
      case 'directive':
        return this.directive(request, parameters, dryRun);
    }
  }

  private async knowledge(itemId: string, dryRun: boolean): Promise<Executed> {
    const found = await this.dirigent.loader.items.resolve('knowledge', itemId);
    const text = await readFile(found.file, 'utf8');
    await verifyItemText(text, found.file, 'knowledge', {
      trust: this.trust,
      requireSignatures: this.requireSignatures,
      space: found.space,
    });
    const { metadata, content } = parseKnowledge(text, found.file);
    return { kind: 'knowledge', itemId, dryRun, space: found.space, metadata, content };
  }

  private async tool(
    itemId: string,
    params: Record<string, unknown>,
    dryRun: boolean,
  ): Promise<Executed> {
    const dispatcher = await this.toolDispatcher();
    const projectDir = this.dirigent.projectDir;
    if (dryRun) {
      const checked = await dispatcher.checkCall(itemId, params, projectDir);
      return { kind: 'tool', itemId, dryRun: true, params: checked.params, chain: checked.chain };
    }
    const started = performance.now();
    const result = await dispatcher.dispatch({
      itemId,
      params,
      projectDir,
      runId: 'execute',
      step: 'tool',
      attempt: 1,
      signal: new AbortController().signal,
    });
    return {
      kind: 'tool',
      itemId,
      dryRun: false,
      result,
      durationMs: Math.round(performance.now() - started),
    };
  }

  private async directive(
    request: ExecuteRequest,
    inputs: Record<string, unknown>,
    dryRun: boolean,
  ): Promise<Executed> {
    const itemId = request.itemId;
    if (request.resume !== undefined) return this.resume(itemId, request.resume);
    if (dryRun) {
      const checked = await this.dirigent.check(itemId, inputs);
      return { kind: 'directive', itemId, dryRun: true, inputs: checked };
    }
    const trigger = request.trigger ?? 'library';
    const run =
      request.wait === false
        ? (await this.dirigent.start({ directive: itemId, inputs, trigger })).record
        : await this.dirigent.run({ directive: itemId, inputs, trigger });
    return { kind: 'directive', itemId, dryRun: false, run };
  }

  /** Answers the waiting step of a run of `itemId` (the one named by `signal`, or the first). */
  private async resume(
    itemId: string,
    resume: NonNullable<ExecuteRequest['resume']>,
  ): Promise<Executed> {
    const record = await this.dirigent.get(resume.runId);
    if (record.directive !== itemId)
      throw DirigentError.fatal(
        ErrorCode.INVALID_REQUEST,
        `Run ${resume.runId} is a run of "${record.directive}", not of "${itemId}".`,
        { hint: `Execute directive "${record.directive}" to answer it.` },
      );
    // Nested waits (a child run's instruction) are answered through the run itself.
    const signal = resume.signal ?? record.waiting?.[0]?.signal;
    if (signal === undefined) throw runNotWaiting(resume.runId, record.status, 'answer');
    const run = await this.dirigent.signal(resume.runId, signal, resume.answer ?? null);
    return { kind: 'directive', itemId, dryRun: false, run };
  }

  private async toolDispatcher(): Promise<ItemDispatcher> {
    if (this.dispatcher !== undefined) return this.dispatcher;
    const { ItemDispatcher } = await import('../tools/item-dispatcher.js');
    this.dispatcher ??= new ItemDispatcher(this.dirigent.loader.items, {
      requireSignatures: this.requireSignatures,
      limits: this.dirigent.loader.policy.limits,
    });
    return this.dispatcher;
  }

  /** Ends the warm processes the tools it ran started, and stops following files. */
  async close(): Promise<void> {
    await this.dispatcher?.close();
  }
}

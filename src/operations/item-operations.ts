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
import type { RunRecord } from '../engine/run-record.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { ItemCatalog } from '../items/item-catalog.js';
import type { ItemKind } from '../items/item-kind.js';
import { parseKnowledge } from '../items/knowledge-item.js';
import { signItems, type SignedBatch, type SignedItem } from '../items/sign-items.js';
import { readSigningKey, signingKeyDir } from '../items/signing/key-ring.js';
import { TrustStore } from '../items/signing/trust-store.js';
import { verifyItemText } from '../items/signing/verify-item.js';
import type { SpaceName } from '../items/space.js';
import { ItemIndex } from '../search/item-index.js';
import type { SearchPage } from '../search/search-page.js';
import type { SearchRequest } from '../search/search-request.js';
import { BUILTIN_TOOLS } from '../tools/builtin/index.js';
import type { ItemDispatcher } from '../tools/item-dispatcher.js';
import type { RunTrigger } from '../telemetry/run-trace.js';
import { loadItem, type LoadedItem, type LoadRequest } from './load-item.js';
import type { Dirigent } from './dirigent.js';

/** The kinds of items, as faces accept them. */
export const ITEM_KINDS: readonly ItemKind[] = ['directive', 'tool', 'knowledge'];

/** What `execute` takes. */
export interface ExecuteRequest {
  kind: ItemKind;
  itemId: string;
  /** A tool's parameters, a directive's inputs; unused for knowledge. */
  parameters?: Record<string, unknown>;
  /** Check only: the item resolves and verifies, the parameters are valid; nothing runs. */
  dryRun?: boolean;
  /**
   * A directive: resolve once the run ends or waits (default), or at once with the run as it
   * stands (`false`).
   */
  wait?: boolean;
  /**
   * A directive run that waits: answer it instead of starting a run. `answer` is the waiting
   * step's result (an instruction's answer, a signal's payload).
   */
  resume?: { runId: string; answer?: unknown; signal?: string };
  /** What started a directive's run, for its telemetry (default `library`). */
  trigger?: RunTrigger;
}

/** What `execute` answers, by kind. */
export type Executed =
  | { kind: 'tool'; itemId: string; dryRun: false; result: unknown; durationMs: number }
  | {
      kind: 'tool';
      itemId: string;
      dryRun: true;
      params: Record<string, unknown>;
      chain: { itemId: string; space: string }[];
    }
  | { kind: 'directive'; itemId: string; dryRun: false; run: RunRecord }
  | { kind: 'directive'; itemId: string; dryRun: true; inputs: Record<string, unknown> }
  | {
      kind: 'knowledge';
      itemId: string;
      dryRun: boolean;
      space: SpaceName;
      metadata: Record<string, unknown>;
      content: string;
    };

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
  private indexInstance: ItemIndex | undefined;
  private dispatcher: ItemDispatcher | undefined;
  private readonly trust: TrustStore;

  constructor(private readonly dirigent: Dirigent) {
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
    this.indexInstance ??= new ItemIndex(this.catalog);
    return this.indexInstance.search(request);
  }

  /**
   * Validates and signs an item, or each item a glob matches, in the project or user space with
   * the user's signing key (`signingKeyDir`). See `signItems` for the outcome and the errors;
   * `NO_SIGNING_KEY` when there is no key.
   */
  async sign(request: SignRequest): Promise<SignedItem | SignedBatch> {
    checkKind(request.kind);
    const projectDir = this.dirigent.projectDir;
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
      const builtin =
        request.kind === 'tool' && request.source !== 'project' && request.source !== 'user'
          ? BUILTIN_TOOLS.find((t) => t.itemId === request.itemId)
          : undefined;
      if (builtin === undefined || DirigentError.from(err).code !== ErrorCode.UNKNOWN_TOOL)
        throw err;
      if (request.destination !== undefined && request.destination !== 'system')
        throw DirigentError.fatal(
          ErrorCode.INVALID_REQUEST,
          `Tool "${builtin.itemId}" is built into Dirigent: it has no file to copy.`,
          { hint: 'Write a tool of your own under .ai/tools/ with the same item id to shadow it.' },
        );
      const slash = builtin.itemId.lastIndexOf('/');
      return {
        kind: 'tool',
        itemId: builtin.itemId,
        space: 'system',
        file: '',
        content: `${JSON.stringify({ item_id: builtin.itemId, description: builtin.description, parameters: builtin.paramsSchema }, null, 2)}\n`,
        metadata: {
          name: builtin.itemId.slice(slash + 1),
          description: builtin.description,
          category: builtin.itemId.slice(0, slash),
          type: 'builtin',
          tags: [],
        },
        signature: { status: 'unsigned' },
        warnings: [],
      };
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
    if (signal === undefined)
      throw DirigentError.fatal(
        ErrorCode.RUN_NOT_WAITING,
        `Run ${resume.runId} is ${record.status}: nothing waits for an answer.`,
        { hint: 'Start a new run instead.' },
      );
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

function checkKind(kind: unknown): void {
  if (ITEM_KINDS.includes(kind as ItemKind)) return;
  throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `"${String(kind)}" is not an item type.`, {
    hint: `Item types: ${ITEM_KINDS.join(', ')}.`,
  });
}

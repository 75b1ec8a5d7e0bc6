/**
 * The tool dispatcher over items: the built-in tools, then tools resolved in the project, user and
 * system spaces and run through their executor chain, then RYE's names of built-ins
 * (`rye/file-system/*`, `rye/web/webfetch`) where no space holds such a tool. Per call: build the
 * chain (tool → runtimes → primitive), verify each link's signature, validate the parameters
 * against the tool's schema, resolve its declared secrets, build the config and environment down
 * the chain, run the primitive, check the result against the tool's output schema, and scrub
 * secrets from whatever comes back.
 */
import { dirname } from 'node:path';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { ItemResolver } from '../items/item-resolver.js';
import { readToolItem } from '../items/read-tool-item.js';
import { TrustStore } from '../items/signing/trust-store.js';
import { verifyItem } from '../items/signing/verify-item.js';
import type { ChainLink } from '../items/tool-item.js';
import { checkToolEnabled } from '../items/tool-registry.js';
import { checkJsonSize } from '../policy/check-json-size.js';
import { DEFAULT_LIMITS, signaturesRequiredByEnv } from '../policy/project-policy.js';
import { buildChain } from '../runtimes/build-chain.js';
import {
  chainEnvironment,
  configSyntaxes,
  mergeChainConfig,
  paramSyntaxes,
  templateConfig,
} from '../runtimes/chain-config.js';
import { PrimitiveRegistry } from '../runtimes/primitive-registry.js';
import { resolvePython } from '../runtimes/python-interpreter.js';
import { toolEnvironment } from '../runtimes/run-process.js';
import { redactSecrets, resolveSecrets } from '../runtimes/secrets.js';
import { ShellVariables } from '../values/shell-render.js';
import { declaredSyntax } from '../values/syntax.js';
import { Telemetry } from '../telemetry/telemetry.js';
import { bindParams } from './bind-params.js';
import { BuiltinDispatcher, describeInvalidParams } from './builtin-dispatcher.js';
import { DEFAULT_RETRY_POLICY } from './default-retry-policy.js';
import type { ItemDispatcherOptions } from './item-dispatcher-options.js';
import { projectRequiresSignatures } from './project-requires-signatures.js';
import { RyeAliases } from './rye-aliases.js';
import type { ToolCall } from './tool-call.js';
import type { ToolDescription, ToolDispatcher } from './tool-dispatcher.js';
import { ToolSchemas } from './tool-schemas.js';
import { timeoutOf } from './tool-timeout.js';
import { runtimeOf, tracedDispatch } from './traced-dispatch.js';
import { unknownTool } from '../errors/item-errors.js';

export type { ItemDispatcherOptions } from './item-dispatcher-options.js';

/** A {@link ToolDispatcher} over the built-in tools and the tools of the project's spaces. */
export class ItemDispatcher implements ToolDispatcher {
  private readonly builtins: BuiltinDispatcher;
  private readonly aliases: RyeAliases;
  private readonly schemas = new ToolSchemas();
  private readonly described = new Map<string, ToolDescription>();
  private readonly trust: TrustStore;
  private readonly requireSignatures: boolean;
  private readonly env: Record<string, string | undefined>;
  /** `{user_space}` and `{system_space}` of RYE's templates: the folders holding `.ai`. */
  private readonly spaceRoots: Record<string, string>;
  /** The primitives this dispatcher runs; {@link close} ends their warm processes. */
  readonly primitives: PrimitiveRegistry;
  private readonly telemetry: Telemetry | undefined;

  constructor(
    private readonly items: ItemResolver,
    private readonly options: ItemDispatcherOptions = {},
  ) {
    this.builtins =
      options.builtins ??
      new BuiltinDispatcher(undefined, {
        env: options.env ?? process.env,
        ...(options.secretsFile !== undefined && { secretsFile: options.secretsFile }),
      });
    this.env = options.env ?? process.env;
    this.aliases = new RyeAliases(items, {
      env: this.env,
      ...(options.secretsFile !== undefined && { secretsFile: options.secretsFile }),
    });
    this.trust = new TrustStore(items.spaces);
    this.requireSignatures =
      options.requireSignatures ??
      ((options.policy?.requireSignatures ?? projectRequiresSignatures(items.spaces, this.env)) ||
        signaturesRequiredByEnv(this.env));
    this.primitives = options.primitives ?? new PrimitiveRegistry(items);
    this.telemetry = Telemetry.of(options.telemetry);
    this.spaceRoots = Object.fromEntries(
      items.spaces
        .filter((s) => s.name !== 'project')
        .map((s) => [`${s.name}_space`, dirname(s.root)]),
    );
  }

  /** Built-ins are known at once; item tools once they have been run (their files are read then). */
  describe(itemId: string): ToolDescription | undefined {
    return (
      this.builtins.describe(itemId) ?? this.aliases.active(itemId) ?? this.described.get(itemId)
    );
  }

  /**
   * The executor chain of `itemId`, tool first, each link verified; what `dispatch` runs. Throws
   * the chain's errors (`UNKNOWN_TOOL`, `EXECUTOR_NOT_FOUND`, `CHAIN_*`, signature failures).
   */
  async chainOf(itemId: string, projectDir: string): Promise<ChainLink[]> {
    const chain = await buildChain(this.items, itemId, (r) => readToolItem(r, projectDir)).catch(
      (err: unknown) => {
        throw this.unknown(itemId, err);
      },
    );
    for (const link of chain) {
      await verifyItem(link.file, 'tool', {
        trust: this.trust,
        requireSignatures: this.requireSignatures,
        space: link.space,
      });
    }
    return chain;
  }

  /**
   * Checks a call without running it (a dry run): the tool resolves, its chain builds and
   * verifies, and `params` satisfy its schema (`INVALID_PARAMS` otherwise). Resolves with the
   * parameters as the tool would receive them (coerced, defaults filled) and the chain.
   */
  async checkCall(
    itemId: string,
    params: Record<string, unknown>,
    projectDir: string,
  ): Promise<{ params: Record<string, unknown>; chain: { itemId: string; space: string }[] }> {
    const builtin = this.builtins.describe(itemId) ?? this.aliases.active(itemId);
    const chain = builtin === undefined ? await this.chainOf(itemId, projectDir) : [];
    const schema = builtin?.paramsSchema ?? chain[0]!.item.paramsSchema;
    const checked = structuredClone(params);
    const validate = this.schemas.params(schema);
    if (!validate(checked)) throw describeInvalidParams(itemId, validate.errors ?? [], schema);
    return { params: checked, chain: chain.map((l) => ({ itemId: l.itemId, space: l.space })) };
  }

  /** Whether `itemId` is one of the built-in tools (which have no chain), or RYE's name of one. */
  isBuiltin(itemId: string): boolean {
    return this.builtinsOf(itemId) !== undefined;
  }

  /** The dispatcher of the built-in `itemId`: the built-ins', or that of RYE's names in force. */
  private builtinsOf(itemId: string): BuiltinDispatcher | undefined {
    if (this.builtins.describe(itemId) !== undefined) return this.builtins;
    return this.aliases.active(itemId) === undefined ? undefined : this.aliases.dispatcher;
  }

  /**
   * Runs the call; `chain`, when the caller has already built it with {@link chainOf} (a worker
   * checking the tool's locks first), is used instead of building it again.
   */
  async dispatch(call: ToolCall, chain?: ChainLink[]): Promise<unknown> {
    const t = this.telemetry;
    if (t === undefined) return this.dispatchChecked(call, chain);
    return tracedDispatch(
      t,
      call,
      this.isBuiltin(call.itemId)
        ? runtimeOf(call.itemId, undefined)
        : async () =>
            runtimeOf(call.itemId, (chain ??= await this.chainOf(call.itemId, call.projectDir))),
      (traced) => this.dispatchChecked(traced, chain),
    );
  }

  /** {@link dispatch}, without telemetry: runs the call and checks its result's size. */
  private async dispatchChecked(call: ToolCall, chain?: ChainLink[]): Promise<unknown> {
    const builtins = this.builtinsOf(call.itemId);
    const result = await (builtins !== undefined
      ? builtins.dispatch(call)
      : this.dispatchItem(call, chain));
    const limits = this.options.limits ?? DEFAULT_LIMITS;
    checkJsonSize(
      result,
      { maxBytes: limits.resultBytes, maxDepth: limits.jsonDepth },
      {
        what: `The result of tool "${call.itemId}"`,
        code: ErrorCode.RESULT_TOO_LARGE,
        setting: 'limits.result_bytes',
      },
    );
    return result;
  }

  private async dispatchItem(call: ToolCall, chain?: ChainLink[]): Promise<unknown> {
    chain ??= await this.chainOf(call.itemId, call.projectDir);
    const space = this.items.spaces.find((s) => s.name === chain[0]!.space);
    if (space !== undefined) await checkToolEnabled(space.root, call.itemId);
    const tool = chain[0]!.item;
    const primitive = this.primitives.get(chain[chain.length - 1]!);
    const secretSources = {
      env: this.env,
      projectDir: call.projectDir,
      ...(this.options.secretsFile !== undefined && { file: this.options.secretsFile }),
    };
    const { config: merged, scope } = mergeChainConfig(chain);
    const codeIn = configSyntaxes(merged, chain[chain.length - 1]!.itemId);
    const fromConfig = paramSyntaxes(merged, scope, codeIn, Object.keys(call.params));
    const vars = new ShellVariables();
    const bound = await bindParams(
      call,
      (name) => declaredSyntax(call.itemId, tool.paramsSchema, name) ?? fromConfig[name],
      (names) => resolveSecrets(call.itemId, names, secretSources),
      vars,
    );
    const params = bound.params;
    const validate = this.schemas.params(tool.paramsSchema);
    if (!validate(params))
      throw describeInvalidParams(call.itemId, validate.errors ?? [], tool.paramsSchema);
    this.described.set(call.itemId, {
      itemId: call.itemId,
      description: tool.description,
      paramsSchema: tool.paramsSchema,
      retry: DEFAULT_RETRY_POLICY,
    });
    const declared = await resolveSecrets(call.itemId, tool.requiredSecrets, secretSources);
    const secrets = { ...bound.secrets, ...declared };
    try {
      const env = chainEnvironment(chain, {
        ...toolEnvironment(),
        RYE_PYTHON: await resolvePython(call.projectDir),
        RYE_NODE: process.execPath,
        ...declared,
        ...(call.traceparent !== undefined && { TRACEPARENT: call.traceparent }),
      });
      const config = templateConfig(
        merged,
        env,
        {
          ...params,
          tool_path: tool.file,
          tool_dir: dirname(tool.file),
          project_path: call.projectDir,
          ...this.spaceRoots,
          params_json: JSON.stringify(params),
        },
        scope,
        codeIn,
        vars,
      );
      const result = await primitive({
        itemId: call.itemId,
        chain,
        params,
        config,
        env,
        secrets: declared,
        vars: vars.values,
        projectDir: call.projectDir,
        signal: call.signal,
        timeoutMs: timeoutOf(config, tool.limits.timeoutMs),
        ...(call.traceparent !== undefined && { traceparent: call.traceparent }),
      });
      if (tool.outputSchema !== undefined)
        this.schemas.checkOutput(call.itemId, tool.outputSchema, result);
      return redactSecrets(result, secrets);
    } catch (err) {
      throw redactSecrets(DirigentError.from(err), secrets);
    }
  }

  /** Ends the warm processes (Python hosts, Deno sandboxes, MCP clients) this dispatcher started. */
  close(): Promise<void> {
    return this.primitives.close();
  }

  /** An unknown tool's error, with a "did you mean" among the built-ins. */
  private unknown(itemId: string, err: unknown): unknown {
    const e = DirigentError.from(err);
    if (e.code !== ErrorCode.UNKNOWN_TOOL || e.details?.itemId !== itemId) return err;
    const builtins = this.builtins.itemIds();
    return unknownTool(itemId, builtins, {
      why: 'not a built-in tool, and no space holds it',
      ...(e.hint !== undefined && { hint: e.hint }),
      knownAs: 'Built-in tools',
    });
  }
}

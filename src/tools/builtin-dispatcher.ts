import type * as AjvPackage from 'ajv';
import type { Ajv as AjvInstance, ErrorObject, ValidateFunction } from 'ajv';
import { lazyPackage } from '../lazy-package.js';
import type { RetryPolicy } from '../directive/ast.js';
import { closest, DirigentError, ErrorCode } from '../errors/index.js';
import { BUILTIN_TOOLS } from './builtin/index.js';
import { DEFAULT_RETRY_POLICY } from './default-retry-policy.js';
import { declaredSyntax, SYNTAX_KEYWORD } from '../values/syntax.js';
import { redactSecrets, resolveSecrets } from '../runtimes/secrets.js';
import { bindParams } from './bind-params.js';
import type { ToolCall } from './tool-call.js';
import { abortError } from './abort-error.js';
import { acceptSimpleParams } from './accept-simple-params.js';
import type { ToolContext, ToolDefinition } from './tool-definition.js';
import type { ToolDescription, ToolDispatcher } from './tool-dispatcher.js';
import { unknownTool } from '../errors/item-errors.js';

/** ajv, loaded by the first schema a dispatcher compiles. */
const ajvPackage = lazyPackage<typeof AjvPackage>('ajv');

/** Everything a call needs, prepared once per tool so that dispatch allocates nothing of its own. */
interface Entry {
  definition: ToolDefinition;
  description: ToolDescription;
  /** The compiled params schema, once the first call (or an eager check) has compiled it. */
  validate: ValidateFunction | undefined;
  /** Turns a rejection of the tool into a `DirigentError`; bound once, reused by every call. */
  fail: (err: unknown) => never;
}

/** Options of a {@link BuiltinDispatcher}. */
export interface BuiltinDispatcherOptions {
  /** Where the secrets a directive's templates read come from besides the environment (default as `resolveSecrets`). */
  secretsFile?: string;
  /** The environment secrets are read from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /**
   * Compile every params schema at construction, so that an invalid one is refused there (default:
   * when `tools` are not the built-ins, whose schemas a unit test compiles; these are compiled on
   * their first call, so that a run pays only for the tools it calls).
   */
  compileEagerly?: boolean;
}

/**
 * A {@link ToolDispatcher} over tools that run in this process (by default all built-ins).
 * Parameters built from templates are written in for the language their schema declares
 * (`bind-params.ts`), then validated with ajv, coercing types (`"10"` → `10`) and filling defaults
 * in place.
 */
export class BuiltinDispatcher implements ToolDispatcher {
  private readonly entries = new Map<string, Entry>();
  private ajv: AjvInstance | undefined;

  /** @throws DirigentError `INTERNAL` on a duplicate item id or an invalid params schema. */
  constructor(
    tools: readonly ToolDefinition[] = BUILTIN_TOOLS,
    private readonly options: BuiltinDispatcherOptions = {},
  ) {
    const eager = options.compileEagerly ?? tools !== BUILTIN_TOOLS;
    for (const definition of tools) {
      const id = definition.itemId;
      if (this.entries.has(id)) {
        throw DirigentError.fatal(ErrorCode.INTERNAL, `tool ${id} is defined twice`);
      }
      const description: ToolDescription = Object.freeze({
        itemId: id,
        description: definition.description,
        paramsSchema: definition.paramsSchema,
        retry: Object.freeze(withDefaults(definition.retry)),
      });
      const fail = (err: unknown): never => {
        throw toToolError(id, err);
      };
      const entry: Entry = { definition, description, validate: undefined, fail };
      if (eager) this.validatorOf(entry);
      this.entries.set(id, entry);
    }
  }

  /**
   * The params validator of `entry`, compiled on first use by this dispatcher's ajv (created on
   * first use too: a dispatcher whose tools are never called loads no ajv).
   *
   * @throws DirigentError `INTERNAL` when the tool's params schema is invalid.
   */
  private validatorOf(entry: Entry): ValidateFunction {
    if (entry.validate !== undefined) return entry.validate;
    // One ajv per dispatcher: compiled validators are cached per instance, and each schema is
    // compiled exactly once, not per call.
    if (this.ajv === undefined) {
      this.ajv = new (ajvPackage().Ajv)({ coerceTypes: true, useDefaults: true, allErrors: true });
      this.ajv.addKeyword(SYNTAX_KEYWORD);
    }
    try {
      entry.validate = this.ajv.compile(entry.definition.paramsSchema);
    } catch (err) {
      throw DirigentError.fatal(
        ErrorCode.INTERNAL,
        `params schema of tool ${entry.definition.itemId} is invalid: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return entry.validate;
  }

  describe(itemId: string): ToolDescription | undefined {
    return this.entries.get(itemId)?.description;
  }

  /** The item ids of the tools this dispatcher runs, sorted. */
  itemIds(): string[] {
    return [...this.entries.keys()].sort();
  }

  dispatch(call: ToolCall): Promise<unknown> {
    const entry = this.entries.get(call.itemId);
    if (entry === undefined) return Promise.reject(this.unknownTool(call.itemId));
    if (call.templated !== undefined) return this.dispatchTemplated(call, entry);
    return this.run(call, entry);
  }

  /** A call with parameters built from templates: bound for their language first (see the class). */
  private async dispatchTemplated(call: ToolCall, entry: Entry): Promise<unknown> {
    const schema = entry.description.paramsSchema;
    const { params, vars, secrets } = await bindParams(
      call,
      (name) => declaredSyntax(call.itemId, schema, name),
      (names) =>
        resolveSecrets(call.itemId, names, {
          env: this.options.env ?? process.env,
          projectDir: call.projectDir,
          ...(this.options.secretsFile !== undefined && { file: this.options.secretsFile }),
        }),
    );
    try {
      const asWritten = (text: string) => vars.asWritten(text);
      return redactSecrets(
        await this.run({ ...call, params, vars: vars.values, asWritten }, entry),
        secrets,
      );
    } catch (err) {
      throw redactSecrets(DirigentError.from(err), secrets);
    }
  }

  private run(
    call: ToolCall & Pick<ToolContext, 'vars' | 'asWritten'>,
    entry: Entry,
  ): Promise<unknown> {
    const schema = entry.description.paramsSchema;
    // Plain parameters of a plain schema are taken as they are (defaults filled); others by ajv.
    if (!acceptSimpleParams(schema, call.params)) {
      let validate: ValidateFunction;
      try {
        validate = this.validatorOf(entry);
      } catch (err) {
        return Promise.reject(err as Error);
      }
      if (!validate(call.params))
        return Promise.reject(describeInvalidParams(call.itemId, validate.errors ?? [], schema));
    }
    if (call.signal.aborted) return Promise.reject(abortError(call.signal, `tool ${call.itemId}`));
    let result: unknown;
    try {
      // The call is a valid ToolContext, so it is passed as is rather than copied.
      result = entry.definition.execute(call.params, call);
    } catch (err) {
      return Promise.reject(toToolError(call.itemId, err));
    }
    return isThenable(result)
      ? Promise.resolve(result).then(undefined, entry.fail)
      : Promise.resolve(result);
  }

  private unknownTool(itemId: string): DirigentError {
    return unknownTool(itemId, [...this.entries.keys()].sort());
  }
}

function withDefaults(retry: Partial<RetryPolicy> | undefined): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY };
  // Copied key by key so that an explicit `undefined` keeps the default instead of erasing it.
  for (const key of ['attempts', 'backoff', 'delayMs', 'maxDelayMs'] as const) {
    if (retry?.[key] !== undefined) Object.assign(policy, { [key]: retry[key] });
  }
  return policy;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

function toToolError(itemId: string, err: unknown): DirigentError {
  if (err instanceof DirigentError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return DirigentError.fatal(ErrorCode.TOOL_FAILED, `tool ${itemId} failed: ${message}`, {
    cause: err,
  });
}

/** One fatal error listing every failing path, e.g. `/timeout must be integer; /command is required`. */
/** `INVALID_PARAMS` listing every failing path of `errors` (ajv) for a call of `itemId`. */
export function describeInvalidParams(
  itemId: string,
  errors: readonly ErrorObject[],
  schema: object,
): DirigentError {
  const reasons: string[] = [];
  for (const err of errors) {
    // ajv reports each failed `anyOf` branch, then the anyOf itself; the branches are folded into
    // one reason below, so they are skipped here.
    if (
      errors.some((e) => e.keyword === 'anyOf' && err.schemaPath.startsWith(`${e.schemaPath}/`))
    ) {
      continue;
    }
    reasons.push(describeError(err, errors, schema));
  }
  const unique = [...new Set(reasons)];
  return DirigentError.fatal(
    ErrorCode.INVALID_PARAMS,
    `params of ${itemId} are invalid: ${unique.join('; ')}`,
    { details: { itemId, errors: unique } },
  );
}

function describeError(err: ErrorObject, all: readonly ErrorObject[], schema: object): string {
  const at = err.instancePath;
  switch (err.keyword) {
    case 'required':
      return `${at}/${String(err.params.missingProperty)} is required`;
    case 'additionalProperties': {
      const name = String(err.params.additionalProperty);
      // Top-level typos are the common case (`cmd` for `command`), so suggest a known name.
      const known =
        at === '' ? Object.keys((schema as { properties?: object }).properties ?? {}) : [];
      const match = closest(name, known);
      return `${at}/${name} is not allowed${match === undefined ? '' : ` (did you mean "${match}"?)`}`;
    }
    case 'anyOf': {
      const branches = all.filter((e) => e.schemaPath.startsWith(`${err.schemaPath}/`));
      if (branches.length > 0 && branches.every((e) => e.keyword === 'required')) {
        const names = branches.map((e) => `${at}/${String(e.params.missingProperty)}`);
        return `one of ${names.join(', ')} is required`;
      }
      return `${at || '/'} must match one of: ${branches.map((e) => describeError(e, all, schema)).join(' | ')}`;
    }
    default:
      return `${at || '/'} ${err.message ?? 'is invalid'}`;
  }
}

/**
 * The tool dispatcher over items: the built-in tools, then tools resolved in the project, user and
 * system spaces. Python tools (RYE's formats and the self-registered one) run through the Python
 * runtimes; other formats report which runtime they need.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { extname } from 'node:path';
import { DirigentError } from '../errors/dirigent-error.js';
import { didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { ItemResolver } from '../items/item-resolver.js';
import { readPythonToolMetadata } from '../items/python-tool-metadata.js';
import { resolvePython } from '../runtimes/python-interpreter.js';
import { runPythonTool } from '../runtimes/python-tool-runner.js';
import { BuiltinDispatcher, describeInvalidParams } from './builtin-dispatcher.js';
import { DEFAULT_RETRY_POLICY } from './default-retry-policy.js';
import type { ToolCall } from './tool-call.js';
import type { ToolDescription, ToolDispatcher } from './tool-dispatcher.js';

/** Per call, unless the tool says otherwise (RYE's runtimes use 600 s for graphs, 120 s here). */
const DEFAULT_TIMEOUT_MS = 120_000;

/** A {@link ToolDispatcher} over the built-in tools and the tools of the project's spaces. */
export class ItemDispatcher implements ToolDispatcher {
  private readonly builtins: BuiltinDispatcher;
  private readonly ajv = new Ajv({
    coerceTypes: true,
    useDefaults: true,
    allErrors: true,
    strict: false,
  });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly described = new Map<string, ToolDescription>();

  constructor(
    private readonly items: ItemResolver,
    builtins: BuiltinDispatcher = new BuiltinDispatcher(),
  ) {
    this.builtins = builtins;
  }

  /** Built-ins are known at once; item tools once they have been run (their files are read then). */
  describe(itemId: string): ToolDescription | undefined {
    return this.builtins.describe(itemId) ?? this.described.get(itemId);
  }

  async dispatch(call: ToolCall): Promise<unknown> {
    if (this.builtins.describe(call.itemId) !== undefined) return this.builtins.dispatch(call);
    const resolution = await this.items.resolve('tool', call.itemId).catch((err: unknown) => {
      throw this.unknown(call.itemId, err);
    });
    if (extname(resolution.file) !== '.py') {
      throw DirigentError.fatal(
        ErrorCode.RUNTIME_UNAVAILABLE,
        `Tool "${call.itemId}" (${resolution.file}) needs a runtime for ${extname(resolution.file)} files, which this version does not have yet.`,
        {
          hint: 'Python tools and the built-in dirigent/* tools run today.',
        },
      );
    }
    const python = await resolvePython(call.projectDir);
    const meta = await readPythonToolMetadata(resolution.file, python);
    const schema = meta.paramsSchema ?? { type: 'object' };
    const params = structuredClone(call.params);
    const validate = this.validatorFor(resolution.file, schema);
    if (!validate(params)) throw describeInvalidParams(call.itemId, validate.errors ?? [], schema);
    this.described.set(call.itemId, {
      itemId: call.itemId,
      description: meta.description ?? '',
      paramsSchema: schema,
      retry: DEFAULT_RETRY_POLICY,
    });
    return runPythonTool({
      python,
      file: resolution.file,
      itemId: call.itemId,
      meta,
      params,
      projectDir: call.projectDir,
      signal: call.signal,
      timeoutMs: DEFAULT_TIMEOUT_MS,
    });
  }

  /** An unknown tool's error, with a "did you mean" among the built-ins. */
  private unknown(itemId: string, err: unknown): unknown {
    const e = DirigentError.from(err);
    if (e.code !== ErrorCode.UNKNOWN_TOOL) return err;
    const builtins = this.builtins.itemIds();
    return DirigentError.fatal(
      ErrorCode.UNKNOWN_TOOL,
      `Unknown tool "${itemId}": not a built-in tool, and no space holds it.${didYouMean(itemId, builtins)}`,
      {
        hint: `${e.hint ?? ''} Built-in tools: ${builtins.join(', ')}.`,
        details: { itemId },
      },
    );
  }

  private validatorFor(file: string, schema: object): ValidateFunction {
    const key = `${file}\0${JSON.stringify(schema)}`;
    let v = this.validators.get(key);
    if (v === undefined) {
      v = this.ajv.compile(schema);
      this.validators.set(key, v);
    }
    return v;
  }
}

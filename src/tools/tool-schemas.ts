/**
 * The JSON Schemas of tools, compiled once each (by schema object) and applied to each call: the
 * parameters (coerced, defaults filled) and the result.
 */
import type * as AjvPackage from 'ajv';
import type { Ajv, ValidateFunction } from 'ajv';
import { lazyPackage } from '../lazy-package.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/** ajv, loaded by the first schema compiled (a run that calls no item tool loads none). */
const ajvPackage = lazyPackage<typeof AjvPackage>('ajv');

/** The compiled schemas of the tools one dispatcher runs. */
export class ToolSchemas {
  private ajv: Ajv | undefined;
  private outputAjv: Ajv | undefined;
  private readonly validators = new WeakMap<object, ValidateFunction>();
  private readonly outputValidators = new WeakMap<object, ValidateFunction>();

  /**
   * The validator of parameters of `schema`, which coerces them and fills their defaults in place.
   *
   * @throws DirigentError `INVALID_TOOL` when `schema` is not valid JSON Schema.
   */
  params(schema: object): ValidateFunction {
    this.ajv ??= new (ajvPackage().Ajv)({
      coerceTypes: true,
      useDefaults: true,
      allErrors: true,
      strict: false,
    });
    return compile(this.ajv, this.validators, schema);
  }

  /**
   * Checks a tool's `result` against its output schema.
   *
   * @throws DirigentError `INVALID_OUTPUT` when it does not match.
   */
  checkOutput(itemId: string, schema: Record<string, unknown>, result: unknown): void {
    this.outputAjv ??= new (ajvPackage().Ajv)({ allErrors: true, strict: false });
    const validate = compile(this.outputAjv, this.outputValidators, schema);
    if (validate(result)) return;
    const problems = (validate.errors ?? []).map(
      (e) => `${e.instancePath || '(result)'} ${e.message ?? 'is invalid'}`,
    );
    throw DirigentError.fatal(
      ErrorCode.INVALID_OUTPUT,
      `Tool "${itemId}" returned a result that does not match its output_schema: ${problems.join('; ')}.`,
      {
        hint: 'Fix the tool so that it returns what its output_schema declares (or correct the schema).',
        details: { problems },
      },
    );
  }
}

/** The validator of `schema` from `cache`, compiled by `ajv` the first time. */
function compile(
  ajv: Ajv,
  cache: WeakMap<object, ValidateFunction>,
  schema: object,
): ValidateFunction {
  let v = cache.get(schema);
  if (v === undefined) {
    try {
      v = ajv.compile(schema);
    } catch (err) {
      throw DirigentError.fatal(
        ErrorCode.INVALID_TOOL,
        `A schema of the tool is not valid JSON Schema: ${(err as Error).message}`,
        {
          hint: "Fix the tool's parameter or output schema.",
        },
      );
    }
    cache.set(schema, v);
  }
  return v;
}

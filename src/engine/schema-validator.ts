/**
 * JSON Schema validators, compiled once each by one ajv (every problem reported, keywords ajv does
 * not know allowed) and kept by the schema's text: a declaration checked on every signal is
 * compiled the first time only. ajv is loaded on the first schema, so a process that checks none
 * never pays for it.
 */
import type * as AjvPackage from 'ajv';
import type { Ajv, ValidateFunction } from 'ajv';
import { lazyPackage } from '../lazy-package.js';

export type { ErrorObject, ValidateFunction } from 'ajv';

const ajvPackage = lazyPackage<typeof AjvPackage>('ajv');
let ajv: Ajv | undefined;

/** How many compiled schemas are kept; the one used longest ago goes first. */
const KEPT = 256;
const compiled = new Map<string, { schema: object; validate: ValidateFunction }>();

/** The validator of `schema` (plain JSON), compiled on its first use. */
export function schemaValidator(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  const kept = compiled.get(key);
  if (kept !== undefined) {
    compiled.delete(key); // kept again as the newest
    compiled.set(key, kept);
    return kept.validate;
  }
  ajv ??= new (ajvPackage().Ajv)({ allErrors: true, strict: false });
  const validate = ajv.compile(schema);
  compiled.set(key, { schema, validate });
  if (compiled.size > KEPT) {
    const [oldest, entry] = compiled.entries().next().value!;
    compiled.delete(oldest);
    ajv.removeSchema(entry.schema); // ajv keeps what it compiled, by the schema object
  }
  return validate;
}

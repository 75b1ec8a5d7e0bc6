/**
 * How the API checks requests against their route schemas: ajv, reporting every problem
 * (`allErrors`), never dropping what a client sent. Bodies are taken as typed (`"5"` is not a
 * number); the query string, path parameters and headers are text, so their values are
 * coerced to the types their schemas declare (`?wait=5` is the number 5, and a repeatable
 * parameter given once is a list of one).
 */
import { Ajv, type AnySchema } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { SHARED_SCHEMAS } from './api-schemas.js';

/** A validator compiler for `app.setValidatorCompiler` (see the module comment). */
export function requestValidator(): FastifySchemaCompiler<AnySchema> {
  const make = (coerceTypes: boolean | 'array') => {
    const ajv = new Ajv({ allErrors: true, coerceTypes, useDefaults: true, strict: false });
    for (const schema of SHARED_SCHEMAS) ajv.addSchema(schema as AnySchema);
    return ajv;
  };
  const body = make(false);
  // A parameter that may repeat (`?tag=a:1&tag=b:2`) is an array even when given once.
  const text = make('array');
  return ({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema);
}

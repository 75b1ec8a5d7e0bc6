/**
 * Whatever a request fails with, as a `DirigentError` with one of the stable codes: the
 * operations' own errors as they are, and the web framework's (malformed JSON, schema
 * violations, oversized bodies, unknown routes, rate limits) translated. Anything else is
 * `INTERNAL`, whose message is replaced: a response never carries a stack or an internal detail.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/** An ajv error as Fastify attaches it to a validation failure. */
interface SchemaProblem {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** What Fastify's own errors carry. */
interface FrameworkError {
  code?: string;
  statusCode?: number;
  message?: string;
  validation?: SchemaProblem[];
  validationContext?: string;
}

const PARTS: Record<string, string> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
};

/** See the module comment. `requestId` is named in the message of an internal error. */
export function apiErrorOf(err: unknown, requestId: string): DirigentError {
  if (err instanceof DirigentError)
    return err.code === ErrorCode.INTERNAL ? internal(requestId, err) : err;
  const e = (err ?? {}) as FrameworkError;
  if (Array.isArray(e.validation)) return schemaError(e.validation, e.validationContext ?? 'body');
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return DirigentError.fatal(ErrorCode.INVALID_REQUEST, 'The body is not valid JSON.', {
        hint: 'Send a JSON object with Content-Type: application/json.',
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return DirigentError.fatal(
        ErrorCode.PAYLOAD_TOO_LARGE,
        'The body is larger than this server takes.',
        {
          hint: 'Send less data; the project sets its limits in .ai/config/dirigent.yaml (limits.inputs_bytes, limits.payload_bytes).',
        },
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return DirigentError.fatal(
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        'This server reads JSON bodies only.',
        { hint: 'Send the body with Content-Type: application/json.' },
      );
  }
  const status = e.statusCode ?? 500;
  if (status >= 400 && status < 500)
    return DirigentError.fatal(
      status === 404 ? ErrorCode.NOT_FOUND : ErrorCode.INVALID_REQUEST,
      e.message ?? 'Bad request.',
    );
  return internal(requestId, err);
}

/** A schema violation, with every failing path (`body/inputs`, `query/wait`). */
function schemaError(problems: SchemaProblem[], context: string): DirigentError {
  const part = PARTS[context] ?? context;
  const list = problems.map((p) => {
    const leaf = p.params.missingProperty ?? p.params.additionalProperty;
    const path = `${part}${p.instancePath}${typeof leaf === 'string' ? `/${leaf}` : ''}`;
    const message =
      p.keyword === 'required'
        ? 'is required'
        : p.keyword === 'additionalProperties'
          ? 'is not a known field'
          : (p.message ?? 'is invalid');
    return { path, message };
  });
  const unique = [...new Map(list.map((p) => [`${p.path} ${p.message}`, p])).values()];
  return DirigentError.fatal(
    ErrorCode.INVALID_REQUEST,
    `The request is invalid: ${unique.map((p) => `${p.path} ${p.message}`).join('; ')}.`,
    { hint: 'See GET /openapi.json for what each route takes.', details: { problems: unique } },
  );
}

function internal(requestId: string, cause: unknown): DirigentError {
  return new DirigentError(
    ErrorCode.INTERNAL,
    `Internal error (request ${requestId}); the server's log has the details.`,
    { cause },
  );
}

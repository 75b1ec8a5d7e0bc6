/** The routes of directives: list the project's, and check one without running it. */
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from './api-context.js';
import { errorResponses, ref } from './api-schemas.js';

/** Registers the directive routes on `app`. */
export function directiveRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { dirigent } = ctx;

  app.get(
    '/v1/directives',
    {
      schema: {
        operationId: 'listDirectives',
        tags: ['directives'],
        summary: "The project's directives, with their inputs, and why any cannot run",
        response: {
          200: {
            type: 'object',
            required: ['directives'],
            properties: { directives: { type: 'array', items: ref('DirectiveInfo') } },
            additionalProperties: false,
          },
          ...errorResponses(),
        },
      },
    },
    async () => ({ directives: await dirigent.directives() }),
  );

  app.post<{ Body: { directive: string } | { source: string } }>(
    '/v1/directives/validate',
    {
      bodyLimit: ctx.bodyLimits.source,
      schema: {
        operationId: 'validateDirective',
        tags: ['directives'],
        summary: 'Check a directive without running it',
        description:
          "Either one of the project's directives by item id (`directive`), or the text of a directive file (`source`). The directive's own problems are the answer (200, `valid: false`, with located errors); a `directive` the project does not hold is 404.",
        body: {
          type: 'object',
          properties: {
            directive: { type: 'string', minLength: 1, maxLength: 512 },
            source: { type: 'string', minLength: 1 },
          },
          minProperties: 1,
          maxProperties: 1,
          additionalProperties: false,
        },
        response: { 200: ref('Validation'), ...errorResponses(400, 404, 413, 415) },
      },
    },
    (request) => dirigent.validate(request.body),
  );
}

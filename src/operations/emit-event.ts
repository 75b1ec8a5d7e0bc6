import { randomUUID } from 'node:crypto';
import { EVENT_NAME } from '../directive/read-triggers.js';
import type { DirectiveLoader } from '../engine/directive-loader.js';
import { DirigentError, type SerializedError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { checkSignalPayload } from '../policy/check-json-size.js';
import type { DirectiveInfo } from './directive-catalog.js';
import { checkIdempotencyKey } from './idempotency.js';
import type { StartedRun, StartRequest } from './start-request.js';

/** What {@link emitEvent} started: each subscriber's run, or the error that kept it from starting. */
export interface Emitted {
  event: string;
  id: string;
  runs: ({ directive: string } & (Omit<StartedRun, 'record'> | { error: SerializedError }))[];
}

/** What an event is sent to: the project's directives and how to start them (a `Dirigent`). */
export interface EmitTarget {
  readonly loader: Pick<DirectiveLoader, 'policy'>;
  directives(): Promise<DirectiveInfo[]>;
  start(request: StartRequest): Promise<StartedRun>;
}

/**
 * Sends event `event` (payload: a JSON object, the runs' input `event`): every directive of the
 * project that runs on it (`<on event>`) is started once per event id (default: a new one),
 * however often the same event is sent. Resolves with each subscriber's run, or why it could not
 * start; `INVALID_REQUEST` for a malformed event name or id, `INPUT_TOO_LARGE` for an oversized
 * payload.
 */
export async function emitEvent(
  target: EmitTarget,
  event: string,
  payload: unknown,
  options: { id?: string } = {},
): Promise<Emitted> {
  if (!EVENT_NAME.test(event))
    throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `"${event}" is not an event name.`, {
      hint: 'Event names are letters, digits and . _ : - (order.created), up to 128 characters.',
    });
  const id = options.id ?? randomUUID();
  checkIdempotencyKey(id);
  checkSignalPayload(event, payload, target.loader.policy.limits);
  const subscribers = (await target.directives()).filter(
    (d) => d.valid && d.events.includes(event),
  );
  const runs = await Promise.all(
    subscribers.map(async ({ directive }) => {
      try {
        const { runId, created } = await target.start({
          directive,
          inputs: { event: payload },
          idempotencyKey: `event:${event}:${id}:${directive}`,
          trigger: 'event',
        });
        return { directive, runId, created };
      } catch (err) {
        return { directive, error: DirigentError.from(err).toJSON() };
      }
    }),
  );
  return { event, id, runs };
}

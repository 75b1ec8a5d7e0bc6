/**
 * Progress of runs on workers, for whoever watches them (the CLI prints it as it does for an
 * embedded run): the engine's observer calls are published on a per-run Redis channel and replayed
 * on the watching side. Best effort: progress is for people; the run record is the truth.
 */
import type { Redis } from 'ioredis';
import type { EngineObserver } from '../../engine/engine-options.js';

type ObserverEvent = 'stepStarted' | 'stepEnded' | 'stepRetrying';
const EVENTS: readonly ObserverEvent[] = ['stepStarted', 'stepEnded', 'stepRetrying'];

/** The channel of one run's progress. */
export function runEventsChannel(prefix: string, runId: string): string {
  return `${prefix}:run-events:${runId}`;
}

/** An observer that publishes the step progress of the `watched` runs on each one's channel. */
export function publishingObserver(
  redis: Redis,
  prefix: string,
  watched: ReadonlySet<string>,
): EngineObserver {
  const publish =
    (event: ObserverEvent) =>
    (runId: string, ...args: unknown[]) =>
      watched.has(runId) &&
      void redis
        .publish(runEventsChannel(prefix, runId), JSON.stringify({ event, args: [runId, ...args] }))
        .catch(() => undefined);
  return Object.fromEntries(EVENTS.map((e) => [e, publish(e)])) as EngineObserver;
}

/**
 * Replays one run's progress into `observer` until the returned function is called. Resolves once
 * subscribed, so nothing published after it is missed.
 */
export async function watchRunEvents(
  redis: Redis,
  prefix: string,
  runId: string,
  observer: EngineObserver,
): Promise<() => void> {
  const sub = redis.duplicate();
  sub.on('message', (_channel: string, message: string) => {
    const { event, args } = JSON.parse(message) as { event: ObserverEvent; args: unknown[] };
    if (!EVENTS.includes(event)) return;
    (observer[event] as ((...a: unknown[]) => void) | undefined)?.(...args);
  });
  await sub.subscribe(runEventsChannel(prefix, runId));
  return () => sub.disconnect();
}

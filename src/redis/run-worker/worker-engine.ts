/**
 * The engine a run worker drives its runs with: durable (every transition is stored, gathered),
 * its calls through the worker's dispatcher, and an observer that publishes the runs' progress
 * for whoever watches and stops driving a run whose write another worker refused.
 */
import type { Redis } from 'ioredis';
import { resolve } from 'node:path';
import { DirectiveLoader } from '../../engine/directive-loader.js';
import { Engine } from '../../engine/engine.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import type { QueueDispatcher } from './queue-dispatcher.js';
import type { RedisRunStore } from '../run-store/redis-run-store.js';
import { publishingObserver } from '../run-store/run-events.js';

/** What the engine of a run worker is made of. */
export interface WorkerEngineParts {
  redis: Redis;
  prefix: string;
  /** The project served (default: the current folder). */
  projectDir?: string | undefined;
  dispatcher: QueueDispatcher;
  store: RedisRunStore;
  telemetry: Telemetry | undefined;
  /** Runs whose progress someone watches. */
  watched: ReadonlySet<string>;
  /** Stops driving a run: another worker took it over (its write was fenced off). */
  lose: (runId: string, error: DirigentError) => void;
}

/** The engine of a run worker (see the module comment). */
export function workerEngine(p: WorkerEngineParts): Engine {
  const projectDir = resolve(p.projectDir ?? process.cwd());
  const published = publishingObserver(p.redis, p.prefix, p.watched);
  return new Engine({
    projectDir,
    dispatcher: p.dispatcher,
    loader: new DirectiveLoader(projectDir),
    store: p.store,
    durable: true,
    observer: {
      ...published,
      storeFailed: (runId, error) => {
        published.storeFailed?.(runId, error);
        const e = DirigentError.from(error);
        if (e.code === ErrorCode.RUN_TAKEN_OVER) p.lose(runId, e);
      },
    },
    ...(p.telemetry && { telemetry: p.telemetry }),
  });
}

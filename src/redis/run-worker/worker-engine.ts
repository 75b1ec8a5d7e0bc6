/**
 * The engine a run worker drives its runs with: durable (every transition is stored, gathered),
 * its calls through the worker's dispatcher, and an observer that gives the runs' events to the
 * store, which writes them into each run's feed with the run's next save (`pending-events.ts`),
 * and stops driving a run whose write another worker refused.
 */
import type { RedisClient } from '../redis-client.js';
import { resolve } from 'node:path';
import { DirectiveLoader } from '../../engine/directive-loader.js';
import { Engine } from '../../engine/engine.js';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import type { QueueDispatcher } from './queue-dispatcher.js';
import type { PauseView } from '../../engine/engine-options.js';
import type { RedisRunStore } from '../run-store/redis-run-store.js';
import { PendingEvents } from '../run-store/pending-events.js';

/** What the engine of a run worker is made of. */
export interface WorkerEngineParts {
  redis: RedisClient;
  prefix: string;
  /** The project served (default: the current folder). */
  projectDir?: string | undefined;
  dispatcher: QueueDispatcher;
  store: RedisRunStore;
  telemetry: Telemetry | undefined;
  /** Stops driving a run: another worker took it over (its write was fenced off). */
  lose: (runId: string, error: DirigentError) => void;
  /** The pauses in force, asked at every step. */
  pauses: PauseView;
}

/** The engine of a run worker (see the module comment). */
export function workerEngine(p: WorkerEngineParts): Engine {
  const projectDir = resolve(p.projectDir ?? process.cwd());
  // Made before the engine it serves, and asked of a run's parent only once the engine runs it.
  const events = new PendingEvents((runId) => engine.activeRun(runId)?.lineage.parentRunId);
  p.store.writeFeedFrom(events);
  const engine: Engine = new Engine({
    projectDir,
    dispatcher: p.dispatcher,
    loader: new DirectiveLoader(projectDir),
    store: p.store,
    durable: true,
    pauses: p.pauses,
    observer: {
      ...events.observer,
      storeFailed: (runId, error) => {
        const e = DirigentError.from(error);
        if (e.code === ErrorCode.RUN_TAKEN_OVER) p.lose(runId, e);
      },
    },
    ...(p.telemetry && { telemetry: p.telemetry }),
  });
  return engine;
}

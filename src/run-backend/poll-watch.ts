/**
 * A run's progress from its stored state, for watchers of runs that run elsewhere (the workers of
 * a Redis deployment): the store is read every `intervalMs`, and what changed since is told as the
 * engine's observer would tell it: steps that started, steps that ended, the run waiting or
 * ending. Costs the workers nothing; a step that starts and ends between two reads is told as
 * ended only.
 */
import type { StepRecord } from '../compiler/run-context.js';
import type { EngineObserver } from '../engine/engine-options.js';
import type { RunRecord } from '../engine/run-record.js';

/** The part of a stored run a watcher reads. */
export interface WatchedState {
  record: RunRecord;
  steps: Record<string, StepRecord>;
}

/**
 * Watches until the returned function is called or the run ends, telling what changed since
 * `from` (the state the watcher already has).
 */
export function pollRun(
  load: () => Promise<WatchedState | undefined>,
  observer: EngineObserver,
  from: WatchedState,
  intervalMs = 250,
): () => void {
  let ended = from.record.steps.length;
  const started = new Map<string, string>();
  for (const [name, rec] of Object.entries(from.steps))
    if (rec.status === 'running') started.set(name, `${rec.seq ?? 0}.${rec.attempts}`);
  let status: string | undefined = from.record.status;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    const state = await load().catch(() => undefined);
    if (stopped) return;
    if (state !== undefined) tell(state);
    if (!stopped) timer = setTimeout(() => void tick(), intervalMs);
  };
  const tell = ({ record, steps }: WatchedState) => {
    const runId = record.runId;
    for (const [name, rec] of Object.entries(steps)) {
      // A step's entry (seq) and attempt tell a new start from one already told.
      const mark = `${rec.seq ?? 0}.${rec.attempts}`;
      if (rec.status === 'running' && started.get(name) !== mark) {
        started.set(name, mark);
        observer.stepStarted?.(runId, name, rec.attempts);
      }
    }
    for (; ended < record.steps.length; ended++) observer.stepEnded?.(runId, record.steps[ended]!);
    if (record.status === status) return;
    status = record.status;
    if (record.status === 'waiting') observer.runWaiting?.(runId, record.waiting ?? []);
    if (['completed', 'failed', 'cancelled'].includes(record.status)) {
      observer.runEnded?.(record);
      stop();
    }
  };
  const stop = () => {
    stopped = true;
    clearTimeout(timer);
  };
  void tick();
  return stop;
}

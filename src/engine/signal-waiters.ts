/**
 * Finding who waits for a signal sent to a run: the run itself, or a child directive it waits
 * through (a signal is sent to the run that was started, and reaches the child that waits).
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { RunRecord } from './run-record.js';

/** What finding a signal's waiter reads of a run. */
export interface SignalledRun {
  /** Steps waiting for a signal, by signal name. */
  readonly waiting: { has(signal: string): boolean; values(): { signal: string }[] };
  /** Child runs started by this run, by the step that started them. */
  readonly children: Record<string, string>;
}

/** What an `UNKNOWN_SIGNAL` error says of the run a signal was sent to. */
export interface WaitedRun {
  readonly runId: string;
  readonly record: RunRecord;
}

/** A live run by id, or undefined when it is not live in this process. */
export type LiveRunOf<R> = (runId: string) => R | undefined;

/** The run, or live child run of it, with a step waiting for signal `name`. */
export function findWaiter<R extends SignalledRun>(
  run: R,
  name: string,
  live: LiveRunOf<R>,
): R | undefined {
  if (run.waiting.has(name)) return run;
  for (const childId of Object.values(run.children)) {
    const child = live(childId);
    const found = child && findWaiter(child, name, live);
    if (found) return found;
  }
  return undefined;
}

/** The signals the run and its live child runs wait for. */
export function waitingSignals<R extends SignalledRun>(run: R, live: LiveRunOf<R>): string[] {
  const own = run.waiting.values().map((w) => w.signal);
  const nested = Object.values(run.children).flatMap((id) => {
    const child = live(id);
    return child ? waitingSignals(child, live) : [];
  });
  return [...own, ...nested];
}

/** {@link findWaiter}, or an `UNKNOWN_SIGNAL` error that says what the run waits for. */
export function signalWaiter<R extends SignalledRun & WaitedRun>(
  run: R,
  name: string,
  live: LiveRunOf<R>,
): R {
  const target = findWaiter(run, name, live);
  if (target !== undefined) return target;
  const waiting = waitingSignals(run, live);
  throw DirigentError.fatal(
    ErrorCode.UNKNOWN_SIGNAL,
    `Run ${run.runId} has no step waiting for signal "${name}".`,
    {
      hint: waiting.length
        ? `It waits for: ${waiting.join(', ')}.`
        : `It is ${run.record.status}, not waiting.`,
    },
  );
}

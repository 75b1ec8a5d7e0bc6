/**
 * Pausing a directive, or the whole deployment (DESIGN.md, "Operating runs"). While a directive is
 * paused its runs hold their next steps: a new run is accepted and holds its first step; a run
 * under way finishes the steps it is in and holds the next ones. A run that holds steps and has
 * nothing else under way is `paused`: stored like a waiting run, holding no worker slot. Signals
 * and cancels still reach it. Resuming begins the held steps of the paused runs, in the order the
 * runs started. Pauses are kept where the deployment keeps its state (a file embedded, a set on
 * Redis), so they survive every process restart.
 */
import type { PauseView } from '../engine/engine-options.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/** What a pause or a resume is about: one directive (by item id), or the whole deployment. */
export type PauseTarget = { directive: string } | { all: true };

/** The pauses in force. */
export interface PauseState {
  /** The whole deployment is paused. */
  all: boolean;
  /** The directives paused one by one (item ids), sorted. */
  directives: string[];
}

/** Where pauses are kept, and a view of them fresh enough for every step a run enters. */
export interface PauseBook extends PauseView {
  /** The pauses in force, read afresh (and the view brought up to date). */
  state(): Promise<PauseState>;
  /** Pauses `target`. */
  pause(target: PauseTarget): Promise<void>;
  /** Lifts the pause of `target`; for the whole deployment, every pause. */
  resume(target: PauseTarget): Promise<void>;
  /** Stops keeping the view up to date. */
  close(): void;
}

/** The key under which a set of pauses holds the whole deployment's. */
export const ALL = '*';

/** Whether `state` pauses the runs of `directive`. */
export function pausedIn(state: PauseState, directive: string): boolean {
  return state.all || state.directives.includes(directive);
}

/** The state a set of paused names (directive ids and {@link ALL}) says. */
export function stateOf(names: Iterable<string>): PauseState {
  const directives: string[] = [];
  let all = false;
  for (const name of names)
    if (name === ALL) all = true;
    else directives.push(name);
  return { all, directives: directives.sort() };
}

/** The names a pause or resume of `target` adds or removes. */
export function nameOf(target: PauseTarget): string {
  return 'all' in target ? ALL : target.directive;
}

/** Checks a target as a caller gives it: `INVALID_REQUEST` for neither or both. */
export function checkPauseTarget(target: PauseTarget): PauseTarget {
  const t = target as { directive?: unknown; all?: unknown };
  if ((t.all === true) === (typeof t.directive === 'string' && t.directive !== ''))
    throw DirigentError.fatal(
      ErrorCode.INVALID_REQUEST,
      'A pause or a resume names a directive, or the whole deployment (all), not both or neither.',
      { hint: 'dirigent pause <directive> or dirigent pause --all (and resume alike).' },
    );
  return target;
}

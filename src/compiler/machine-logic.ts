/**
 * The pure half of every run machine: the context updates named by the compiled config. The
 * effects (`startStep`, `stopStep`, `stepEnded`, `nodeEntered`, `branchEnded`, `compensate`) are
 * placeholders here; the engine supplies them with `machine.provide()`, so one compiled machine
 * serves embedded and distributed runs alike.
 */
import type * as Xstate from 'xstate';
import type { SerializedError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { RunContext, RunEvent, RunInput, UndoEntry } from './run-context.js';
import { lazyPackage } from '../lazy-package.js';

// Required, not imported: an import of xstate's CommonJS build scans its text for exports first.
const { assign, setup } = lazyPackage<typeof Xstate>('xstate')();

/** Params of actions that concern one node. */
export interface NodeParams {
  node: string;
}

/** Params of `branchEnded`. */
export interface BranchParams {
  node: string;
  status: 'completed' | 'failed';
}

function errorOf(event: RunEvent): SerializedError {
  if ('error' in event && event.error && 'retryable' in event.error) return event.error;
  return { code: ErrorCode.INTERNAL, message: `Unexpected event ${event.type}.`, retryable: false };
}

const noop = () => undefined;

/** The shared implementation set. */
export const runMachineSetup = setup({
  types: {} as { context: RunContext; events: RunEvent; input: RunInput },
  guards: {
    edge: ({ event }, params: { index: number }) => 'edge' in event && event.edge === params.index,
    /** A completed step has a compensation to run (and a cancel does not skip them). */
    undoPending: ({ context, event }) =>
      context.undo !== undefined &&
      context.undo.length > 0 &&
      !(event.type === 'run.cancel' && event.compensate === false),
    /** A compensation failed for good: the run ends `failed`, whatever ended it. */
    compensationFailed: ({ event }) => event.type === 'compensated' && event.error !== undefined,
  },
  actions: {
    startStep: noop as (args: unknown, params: NodeParams) => void,
    stopStep: noop as (args: unknown, params: NodeParams) => void,
    stepEnded: noop as (args: unknown, params: NodeParams) => void,
    nodeEntered: noop as (args: unknown, params: NodeParams) => void,
    branchEnded: noop as (args: unknown, params: BranchParams) => void,
    compensate: noop as (args: unknown) => void,
    recordDone: assign(({ context, event }) => {
      if (!('edge' in event)) return {};
      return {
        state: event.assigned ? { ...context.state, ...event.assigned } : context.state,
        returned: event.returned ?? context.returned,
      };
    }),
    recordFailed: assign(({ event }) => ({ error: errorOf(event) })),
    /** A step that declares `<compensate>` completed: noted, for undoing it should the run fail. */
    recordUndo: assign(({ context, event }, params: NodeParams) => {
      if (!('edge' in event) || event.skipped === true) return {};
      const entry: UndoEntry = { step: params.node, result: event.result };
      if (event.items !== undefined) entry.items = event.items;
      return { undo: [...(context.undo ?? []), entry] };
    }),
    /** The compensations ran; one that failed for good makes the run's error. */
    compensated: assign(({ event }) =>
      event.type === 'compensated' && event.error !== undefined ? { runError: event.error } : {},
    ),
    setRunError: assign(({ event }, params: { node: string | null }) => {
      const e = errorOf(event);
      return {
        runError: {
          code: e.code,
          message: e.message,
          step: params.node,
          ...(e.location && { location: e.location }),
        },
      };
    }),
    failRun: assign(({ event }) => (event.type === 'run.fail' ? { runError: event.error } : {})),
    cancelRun: assign(({ event }) => ({
      runError: {
        code: ErrorCode.CANCELLED,
        message:
          event.type === 'run.cancel' && event.reason ? event.reason : 'The run was cancelled.',
        step: null,
      },
    })),
  },
});

/** The machine type every compiled directive produces. */
export type RunMachine = ReturnType<(typeof runMachineSetup)['createMachine']>;

/**
 * Machine config in the shape `createMachine` of {@link runMachineSetup} accepts. Compiled configs
 * are built from data at run time, so they are checked by tests rather than by these types.
 */
export type RunMachineConfig = Parameters<(typeof runMachineSetup)['createMachine']>[0];

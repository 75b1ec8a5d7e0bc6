/**
 * The pure half of every run machine: guards and context updates named by the compiled config.
 * The effectful actions (`startStep`, `stopStep`) are placeholders here; the engine supplies them
 * with `machine.provide()`, so one compiled machine serves embedded and distributed runs alike.
 */
import { assign, setup } from 'xstate';
import type { RetryPolicy } from '../directive/ast.js';
import type { SerializedError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { backoffDelay } from './backoff.js';
import type { RunContext, RunEvent, RunInput, StepRecord } from './run-context.js';

/** Params of actions that concern one node. */
export interface NodeParams {
  node: string;
}
/** Params of failure handling: a fixed error replaces the event's one for timers. */
export interface FailureParams extends NodeParams {
  error?: SerializedError;
  policy?: RetryPolicy;
}

function errorOf(event: RunEvent, params: { error?: SerializedError }): SerializedError {
  if (params.error) return params.error;
  if ('error' in event && event.error && 'retryable' in event.error) return event.error;
  return { code: ErrorCode.INTERNAL, message: `Unexpected event ${event.type}.`, retryable: false };
}

function policyOf(event: RunEvent, params: FailureParams): RetryPolicy | undefined {
  return params.policy ?? ('policy' in event ? event.policy : undefined);
}

function freshRecord(): StepRecord {
  return {
    status: 'running',
    result: null,
    error: null,
    attempts: 0,
    startedAt: null,
    endedAt: null,
  };
}

function updateStep(
  context: RunContext,
  node: string,
  patch: Partial<StepRecord>,
): Record<string, StepRecord> {
  return { ...context.steps, [node]: { ...(context.steps[node] ?? freshRecord()), ...patch } };
}

const noop = () => undefined;

/** The shared implementation set. `delays` adds one named retry delay per retried node. */
export function runMachineSetup(delays: Record<string, (args: { context: RunContext }) => number>) {
  return setup({
    types: {} as { context: RunContext; events: RunEvent; input: RunInput },
    delays,
    guards: {
      edge: ({ event }, params: { index: number }) =>
        'edge' in event && event.edge === params.index,
      canRetry: ({ context, event }, params: FailureParams) => {
        const err = errorOf(event, params);
        const attempts = context.steps[params.node]?.attempts ?? 0;
        const policy = policyOf(event, params);
        return err.retryable && policy !== undefined && attempts < policy.attempts;
      },
    },
    actions: {
      startStep: noop as (args: unknown, params: NodeParams) => void,
      stopStep: noop as (args: unknown, params: NodeParams) => void,
      stepEnded: noop as (args: unknown, params: NodeParams) => void,
      stepRetrying: noop as (args: unknown, params: NodeParams) => void,
      enterNode: assign(({ context }, params: NodeParams) => ({
        transitions: context.transitions + 1,
        steps: { ...context.steps, [params.node]: freshRecord() },
      })),
      beginAttempt: assign(({ context }, params: NodeParams) => {
        const prev = context.steps[params.node];
        const attempts = (prev?.attempts ?? 0) + 1;
        // A step's duration spans all its attempts, so the first attempt sets startedAt.
        const startedAt = attempts === 1 || !prev?.startedAt ? Date.now() : prev.startedAt;
        return {
          steps: updateStep(context, params.node, { status: 'running', attempts, startedAt }),
        };
      }),
      recordDone: assign(({ context, event }, params: NodeParams) => {
        if (!('edge' in event)) return {};
        const steps = updateStep(context, params.node, {
          status: event.skipped ? 'skipped' : 'completed',
          ...(event.skipped && { attempts: 0 }),
          result: event.result,
          error: null,
          endedAt: event.endedAt ?? Date.now(),
          ...(event.startedAt !== undefined && { startedAt: event.startedAt }),
        });
        return {
          steps,
          state: event.assigned ? { ...context.state, ...event.assigned } : context.state,
          returned: event.returned ?? context.returned,
        };
      }),
      recordRetry: assign(({ context, event }, params: FailureParams) => {
        const attempts = context.steps[params.node]?.attempts ?? 1;
        const policy = policyOf(event, params);
        const delay = policy ? backoffDelay(policy, attempts) : 0;
        return {
          steps: updateStep(context, params.node, {
            error: errorOf(event, params),
            retryDelayMs: delay,
          }),
        };
      }),
      recordFailed: assign(({ context, event }, params: FailureParams) => {
        const error = errorOf(event, params);
        return {
          steps: updateStep(context, params.node, { status: 'failed', error, endedAt: Date.now() }),
          error,
        };
      }),
      recordBranch: assign(
        ({ context }, params: { node: string; status: 'completed' | 'failed' }) => ({
          steps: updateStep(context, params.node, { status: params.status, endedAt: Date.now() }),
        }),
      ),
      setRunError: assign(({ event }, params: { node: string | null; error?: SerializedError }) => {
        const e = errorOf(event, params);
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
}

/** The machine type every compiled directive produces. */
export type RunMachine = ReturnType<ReturnType<typeof runMachineSetup>['createMachine']>;

/**
 * Machine config in the shape `createMachine` of {@link runMachineSetup} accepts. Compiled configs
 * are built from data at run time, so they are checked by tests rather than by these types.
 */
export type RunMachineConfig = Parameters<ReturnType<typeof runMachineSetup>['createMachine']>[0];

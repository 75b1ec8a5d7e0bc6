import type { StepRecord } from '../compiler/run-context.js';
import type { Directive, ExecuteAction } from '../directive/ast.js';
import { isGranted, requiredCapability } from '../directive/capabilities.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { runLetGo } from '../errors/stop-errors.js';
import type { Scope } from '../expr/scope.js';
import { compileTemplate } from '../expr/template.js';
import { evaluateValue } from '../expr/value.js';
import { childOutcome } from './child-outcome.js';
import { renderParams } from './render-params.js';
import { ENGINE_DEFAULTS } from './engine-options.js';
import type { ToolGate } from '../tools/tool-call.js';
import { childRunId } from './child-run-id.js';
import { workerLost } from '../tools/worker-lost.js';
import type { LoadedDirective } from './directive-loader.js';
import type { ParentRun, RunHost } from './run-host.js';
import type { RunSpans } from './run-spans.js';

/** What one try of an `<execute>` reads and calls on its run (an {@link ActiveRun}). */
export interface ExecutingRun extends ParentRun {
  readonly host: RunHost;
  readonly loaded: LoadedDirective;
  readonly directive: Directive;
  /** The secrets the directive declares: tool parameters leave their values to the dispatcher. */
  readonly secretNames: ReadonlySet<string>;
  readonly steps: Record<string, StepRecord>;
  readonly spans: RunSpans | undefined;
  /** Whether the step's calls may repeat calls made before the run was resumed. */
  isRepeating(node: string): boolean;
  /** Counts one more child run against `limit`; false when the limit is reached. */
  reserveSpawn(limit: number): boolean;
  /** Records the child run a step started. */
  noteChild(node: string, childId: string): void;
  /** The step's call runs in this process, on `worker` (see `ToolCall.inProcess`). */
  callRunsHere(node: string, worker: string): void;
  /** Stores the run as soon as the current transition is over (an in-process call ended). */
  storePromptly(): void;
}

/**
 * One try of an `<execute>`: a tool through the dispatcher, or a child directive run to its end.
 * Checks the directive's permissions for the interpolated item id first. Aborting `signal` stops
 * the tool's work, or cancels the child run.
 */
export function executeAction(
  run: ExecutingRun,
  action: ExecuteAction,
  scope: Scope,
  node: string,
  attempt: number,
  signal: AbortSignal,
  item?: number,
): Promise<unknown> {
  // A run this process let go goes on elsewhere: what its leftover work would start here, the
  // drive that took it up starts itself (under the same call ids).
  if (run.isReleased) throw runLetGo(run.runId, 'this process let it go');
  const itemId = action.itemId.includes('{')
    ? String(compileTemplate(action.itemId).evaluate(scope))
    : action.itemId;
  const perms = run.directive.permissions;
  if (perms !== undefined && !isGranted(perms, requiredCapability(action.itemType, itemId))) {
    throw DirigentError.fatal(
      ErrorCode.PERMISSION_DENIED,
      `The directive's <permissions> do not grant executing ${action.itemType} "${itemId}".`,
      {
        location: action.loc,
        hint: `Add <execute><${action.itemType}>${itemId.replaceAll('/', '.')}</${action.itemType}></execute> to <permissions>.`,
      },
    );
  }
  if (action.itemType === 'directive') {
    const params: Record<string, unknown> = {};
    for (const p of action.params) params[p.name] = evaluateValue(p.value, scope);
    return runChild(run, itemId, params, node, attempt, signal, item);
  }
  const host = run.host;
  const rec = run.steps[node];
  const own = item === undefined && host.durable;
  if (own && rec?.runsOn !== undefined && run.isRepeating(node)) {
    // The call ran in the process that drove the run before, which stopped before it ended.
    const worker = rec.runsOn;
    delete rec.runsOn;
    throw workerLost({ itemId, step: node }, worker);
  }
  const { params, templated } = renderParams(action.params, scope, run.secretNames);
  const deadline = rec?.deadline;
  let here = false;
  const outcome = host.dispatcher.dispatch({
    itemId,
    params,
    ...(templated !== undefined && { templated }),
    projectDir: host.projectDir,
    runId: run.runId,
    step: node,
    attempt,
    callId: callIdOf(run, node, attempt, item),
    ...(deadline !== undefined && { deadline }),
    ...run.spans?.callTrace(node, rec?.attempts ?? attempt, item === undefined),
    ...(run.toolHashes?.[itemId] !== undefined && { toolHash: run.toolHashes[itemId] }),
    ...(run.isRepeating(node) && { repeated: true }),
    ...gateOf(run, node, scope),
    ...(own && {
      inProcess: (worker: string) => {
        here = true;
        run.callRunsHere(node, worker);
      },
    }),
    signal,
  });
  // No queue keeps the outcome of a call made in process: the run stores it at once.
  return own ? outcome.finally(() => here && run.storePromptly()) : outcome;
}

async function runChild(
  run: ExecutingRun,
  itemId: string,
  params: Record<string, unknown>,
  node: string,
  attempt: number,
  signal: AbortSignal,
  item: number | undefined,
): Promise<unknown> {
  const { depth, maxDepth } = run.lineage;
  if (depth + 1 > maxDepth) {
    throw DirigentError.fatal(
      ErrorCode.DEPTH_EXCEEDED,
      `Starting directive "${itemId}" would nest ${depth + 1} levels deep; the limit is ${maxDepth} (<limits depth>).`,
    );
  }
  const limit = run.directive.limits.spawns ?? ENGINE_DEFAULTS.spawns;
  if (!run.reserveSpawn(limit)) {
    throw DirigentError.fatal(
      ErrorCode.SPAWNS_EXCEEDED,
      `This run already started ${limit} child directives, its limit (<limits spawns>).`,
    );
  }
  const parentSpan = run.spans?.attemptSpan(node, run.steps[node]?.attempts ?? attempt);
  const child = await run.host.startChild(itemId, params, run, parentSpan, {
    runId: childRunId(run.runId, callIdOf(run, node, attempt, item)),
    again: run.isRepeating(node),
  });
  run.noteChild(node, child.runId);
  const onAbort = () => run.host.cancel(child.runId, `Parent step "${node}" was stopped.`);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await childOutcome(child);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** See {@link ToolCall.callId}: the step's entry and try, then the foreach item and its try. */
function callIdOf(
  run: ExecutingRun,
  node: string,
  attempt: number,
  item: number | undefined,
): string {
  const rec = run.steps[node];
  const entry = `${node}.${rec?.seq ?? 0}.${rec?.attempts ?? attempt}`;
  return item === undefined ? entry : `${entry}.${item}.${attempt}`;
}

/** The step's `<lock>` and `<rate_limit>` with their keys rendered against the run. */
function gateOf(run: ExecutingRun, node: string, scope: Scope): { gate?: ToolGate } {
  const step = run.loaded.compiled.nodes.get(node)?.node;
  if (step?.kind !== 'step' || (step.lock === undefined && step.rateLimit === undefined)) return {};
  const render = (key: string) => String(compileTemplate(key).evaluate(scope));
  const gate: ToolGate = {};
  if (step.lock) {
    const { key, limit, leaseMs } = step.lock;
    gate.concurrency = { key: render(key), limit, leaseMs };
  }
  if (step.rateLimit) {
    const { key, max, durationMs } = step.rateLimit;
    gate.rateLimit = { key: render(key), max, durationMs };
  }
  return { gate };
}

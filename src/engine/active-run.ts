/**
 * One run in this process: a live xstate actor plus the work its steps have under way. The
 * machine decides; this class performs the `startStep` / `stopStep` effects and feeds results
 * back as events.
 */
import { createActor, type Actor } from 'xstate';
import type { ExecuteAction, ForeachAction, StepNode } from '../directive/ast.js';
import { isGranted, requiredCapability } from '../directive/capabilities.js';
import type { CompiledNode } from '../compiler/compiled-directive.js';
import type { RunMachine } from '../compiler/machine-logic.js';
import type { RunContext, RunEvent } from '../compiler/run-context.js';
import { scopeOf, settle, settleSkipped } from '../compiler/settle.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { evaluateCondition } from '../expr/condition.js';
import type { Scope } from '../expr/scope.js';
import { compileTemplate } from '../expr/template.js';
import { evaluateValue } from '../expr/value.js';
import type { LoadedDirective } from './directive-loader.js';
import type { Engine } from './engine.js';
import { ENGINE_DEFAULTS } from './engine-options.js';
import { runForeach } from './run-foreach.js';
import type { RunRecord, StepEntry, WaitingStep } from './run-record.js';
import type { StoredRun } from './run-store.js';

/** How a run was started: its place in a tree of child directives. */
export interface RunLineage {
  depth: number;
  /** Deepest nesting allowed below the root run. */
  maxDepth: number;
  parentRunId: string | null;
}

/** Work under way for one step. */
interface Inflight {
  controller: AbortController;
  timer: NodeJS.Timeout | undefined;
  childRunId?: string;
}

type Waiter = (record: RunRecord) => void;

export class ActiveRun {
  readonly actor: Actor<RunMachine>;
  readonly record: RunRecord;
  readonly inflight = new Map<string, Inflight>();
  readonly waiting = new Map<string, WaitingStep>();
  readonly backoff = new Set<string>();
  readonly children: Record<string, string> = {};
  private spawns = 0;
  private runTimer: NodeJS.Timeout | undefined;
  private waiters: Waiter[] = [];
  /** The latest store write; settled() resolves only after it. */
  private stored: Promise<void> = Promise.resolve();
  private enders: Waiter[] = [];
  private stopped: StepEntry[] = [];
  private idleCheckQueued = false;

  constructor(
    readonly engine: Engine,
    readonly loaded: LoadedDirective,
    readonly lineage: RunLineage,
    runId: string,
    start: { inputs: Record<string, unknown> } | { stored: StoredRun },
  ) {
    const machine = engine.providedMachine(loaded.compiled.machine);
    if ('stored' in start) {
      this.record = start.stored.record;
      Object.assign(this.children, start.stored.children);
      for (const w of this.record.waiting ?? [])
        if (w.runId === undefined) this.waiting.set(w.signal, w);
      this.actor = createActor(machine, {
        snapshot: start.stored.snapshot as never,
        input: { inputs: {} },
      });
    } else {
      this.record = {
        runId,
        directive: loaded.itemId,
        status: 'running',
        outputs: null,
        steps: [],
        error: null,
        startedAt: Date.now(),
        endedAt: null,
      };
      this.actor = createActor(machine, { input: { inputs: start.inputs } });
    }
    engine.register(this);
    this.actor.subscribe({ next: () => this.onSnapshot(), error: (err) => this.crash(err) });
  }

  get runId(): string {
    return this.record.runId;
  }

  get directive() {
    return this.loaded.compiled.directive;
  }

  /** Starts (or, for a restored run, re-arms timers of) the run. */
  begin(): void {
    const seconds = this.directive.limits.durationSeconds;
    const deadline = seconds === undefined ? undefined : this.record.startedAt + seconds * 1000;
    if (deadline !== undefined) {
      this.runTimer = setTimeout(
        () =>
          this.send({
            type: 'run.fail',
            error: {
              code: ErrorCode.RUN_TIMEOUT,
              message: `The run took longer than its limit of ${seconds}s (<limits duration_seconds>).`,
              step: null,
            },
          }),
        Math.max(0, deadline - Date.now()),
      );
    }
    this.actor.start();
    // After start: a restored wait whose deadline passed while stored fails right here.
    for (const w of [...this.waiting.values()]) this.armWaitTimer(w);
    this.queueIdleCheck();
  }

  /** Resolves when the run ends (completed, failed or cancelled), however long it waits. */
  finished(): Promise<RunRecord> {
    if (this.isOver()) return Promise.resolve(this.record);
    return new Promise((resolve) => this.enders.push(resolve));
  }

  private isOver(): boolean {
    return this.record.status !== 'running' && this.record.status !== 'waiting';
  }

  /** Resolves when the run ends or waits for a signal, once that state is stored. */
  settled(): Promise<RunRecord> {
    if (this.record.status !== 'running') return this.stored.then(() => this.record);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** True while this run waits for a signal, itself or through a child directive. */
  get isWaiting(): boolean {
    return this.record.status === 'waiting';
  }

  send(event: RunEvent): void {
    if (this.actor.getSnapshot().status === 'active') this.actor.send(event);
  }

  /** Delivers a signal to the step waiting for it; false when none waits for `name`. */
  deliver(name: string, payload: unknown): boolean {
    const w = this.waiting.get(name);
    if (w === undefined) return false;
    this.waiting.delete(name);
    const inflight = this.inflight.get(w.step);
    if (inflight) this.clearInflight(w.step, inflight);
    this.resumeRunning();
    this.finish(this.node(w.step), payload);
    return true;
  }

  /** Marks this run (and the parents waiting through it) as running again. */
  resumeRunning(): void {
    if (this.record.status !== 'waiting') return;
    this.record.status = 'running';
    delete this.record.waiting;
    if (this.lineage.parentRunId !== null)
      this.engine.activeRun(this.lineage.parentRunId)?.resumeRunning();
  }

  /** Links a restored child run to the parent step that started it. */
  adoptChild(node: string, child: ActiveRun): void {
    const cn = this.node(node);
    if (cn.node.kind !== 'step') return;
    const inflight = this.track(cn, cn.node);
    inflight.childRunId = child.runId;
    this.settleWork(cn, inflight, this.engine.awaitChild(child), cn.node.retry);
  }

  cancel(reason?: string): void {
    this.send({ type: 'run.cancel', ...(reason !== undefined && { reason }) });
  }

  // ---- effects named by the machine ----

  /** `startStep`: begin an attempt of a step (or settle a parallel block whose branches ended). */
  startStep(context: RunContext, node: string): void {
    const cn = this.node(node);
    this.backoff.delete(node);
    const maxSteps = this.directive.limits.maxSteps ?? ENGINE_DEFAULTS.maxSteps;
    if (context.transitions > maxSteps) {
      this.send({
        type: 'run.fail',
        error: {
          code: ErrorCode.MAX_STEPS_EXCEEDED,
          message: `The run took more than ${maxSteps} steps (<limits max_steps>); is a loop missing its exit?`,
          step: node,
        },
      });
      return;
    }
    if (cn.node.kind === 'parallel') {
      const branches = Object.fromEntries(
        cn.node.branches.map((b) => [b.name, context.steps[b.name]?.status ?? 'completed']),
      );
      this.finishWith(cn, () => settle(cn, context, { branches }, this.engine.env));
      return;
    }
    const step = cn.node;
    const attempt = context.steps[node]?.attempts ?? 1;
    if (attempt === 1 && step.condition) {
      let holds: boolean;
      try {
        holds = evaluateCondition(step.condition, scopeOf(context, undefined, this.engine.env));
      } catch (err) {
        this.fail(cn, err);
        return;
      }
      if (!holds) {
        this.finishWith(cn, () => settleSkipped(cn, context, this.engine.env));
        return;
      }
    }
    this.engine.observer?.stepStarted?.(this.runId, node, attempt);
    try {
      this.runAction(cn, step, context, attempt);
    } catch (err) {
      this.fail(cn, err);
    }
  }

  /** `stopStep`: the machine left the step; stop whatever still runs for it. */
  stopStep(node: string): void {
    let wasWaiting = false;
    for (const [name, w] of this.waiting) {
      if (w.step === node) wasWaiting = this.waiting.delete(name);
    }
    const inflight = this.inflight.get(node);
    if (inflight === undefined && !wasWaiting) return;
    if (inflight) {
      this.clearInflight(node, inflight);
      inflight.controller.abort(
        DirigentError.fatal(ErrorCode.CANCELLED, `Step "${node}" was stopped.`),
      );
      if (inflight.childRunId)
        this.engine.cancel(inflight.childRunId, `Parent step "${node}" was stopped.`);
    }
    // Recorded after the transition that stopped it, so the cause comes first in the record.
    const rec = this.actor.getSnapshot().context.steps[node];
    this.stopped.push({
      name: node,
      status: 'cancelled',
      attempts: rec?.attempts ?? 1,
      durationMs: rec?.startedAt ? Date.now() - rec.startedAt : 0,
    });
  }

  /** `stepEnded`: append the step's outcome to the run record. */
  stepEnded(context: RunContext, node: string): void {
    const rec = context.steps[node];
    if (rec === undefined) return;
    const entry: StepEntry = {
      name: node,
      status:
        rec.status === 'failed' ? 'failed' : rec.status === 'skipped' ? 'skipped' : 'completed',
      attempts: rec.attempts,
      durationMs: rec.startedAt && rec.endedAt ? rec.endedAt - rec.startedAt : 0,
    };
    if (rec.error && rec.status === 'failed') {
      entry.error = {
        code: rec.error.code,
        message: rec.error.message,
        ...(rec.error.location && { location: rec.error.location }),
      };
    }
    this.record.steps.push(entry);
    this.engine.observer?.stepEnded?.(this.runId, entry);
  }

  /** `stepRetrying`: a retryable failure will be tried again after the backoff delay. */
  stepRetrying(context: RunContext, node: string): void {
    this.backoff.add(node);
    const rec = context.steps[node];
    if (rec?.error)
      this.engine.observer?.stepRetrying?.(this.runId, node, rec.error, rec.retryDelayMs ?? 0);
  }

  // ---- actions ----

  private runAction(cn: CompiledNode, step: StepNode, context: RunContext, attempt: number): void {
    const action = step.action;
    const scope = scopeOf(context, undefined, this.engine.env);
    switch (action.type) {
      case 'execute': {
        const inflight = this.track(cn, step);
        let work: Promise<unknown>;
        try {
          work = this.execute(action, scope, inflight, attempt, cn.name);
        } catch (err) {
          work = Promise.reject(err);
        }
        this.settleWork(
          cn,
          inflight,
          work,
          action.itemType === 'tool' ? this.engine.toolPolicy(action.itemId, step) : step.retry,
        );
        return;
      }
      case 'foreach': {
        const inflight = this.track(cn, step);
        const work = runForeach(
          action as ForeachAction,
          scope,
          inflight.controller.signal,
          (exec, vars, signal) =>
            this.execute(
              exec,
              { ...scope, vars },
              { controller: inflight.controller, timer: undefined },
              attempt,
              cn.name,
              signal,
              step,
            ),
        );
        this.settleWork(
          cn,
          inflight,
          work.then((r) => r),
          step.retry,
          action.collect,
        );
        return;
      }
      case 'render': {
        // Settle against `context`: mid-transition, the actor's snapshot is still the old one.
        const text = compileTemplate(action.template).evaluate(scope);
        this.finishWith(cn, () => settle(cn, context, text, this.engine.env));
        return;
      }
      case 'instruction':
      case 'wait': {
        const text = action.type === 'instruction' ? lenientText(action.text, scope) : undefined;
        const w: WaitingStep = {
          step: cn.name,
          signal: action.signal,
          ...(text !== undefined && { text }),
        };
        if (action.timeoutMs !== undefined) w.deadline = Date.now() + action.timeoutMs;
        this.waiting.set(action.signal, w);
        this.armWaitTimer(w);
        return;
      }
      case 'return': {
        const output = action.output;
        const returned = output
          ? Object.fromEntries(Object.entries(output).map(([k, v]) => [k, evaluateValue(v, scope)]))
          : { ...context.state };
        this.finishWith(cn, () => ({ ...settle(cn, context, null, this.engine.env), returned }));
        return;
      }
      case 'gate':
        this.finishWith(cn, () => settle(cn, context, null, this.engine.env));
        return;
    }
  }

  /** Runs one `<execute>`: a tool through the dispatcher, or a child directive. */
  private execute(
    action: ExecuteAction,
    scope: Scope,
    inflight: Inflight,
    attempt: number,
    node: string,
    signal = inflight.controller.signal,
    step?: StepNode,
  ): Promise<unknown> {
    const itemId = String(compileTemplate(action.itemId).evaluate(scope));
    const perms = this.directive.permissions;
    if (perms !== undefined && !isGranted(perms, requiredCapability(action.itemType, itemId))) {
      throw DirigentError.fatal(
        ErrorCode.PERMISSION_DENIED,
        `The directive's <permissions> do not grant executing ${action.itemType} "${itemId}".`,
        { location: action.loc },
      );
    }
    const params: Record<string, unknown> = {};
    for (const p of action.params) params[p.name] = evaluateValue(p.value, scope);
    if (action.itemType === 'directive') return this.startChild(itemId, params, node, inflight);
    const call = {
      itemId,
      params,
      projectDir: this.engine.projectDir,
      runId: this.runId,
      step: node,
      attempt,
      signal,
    };
    return step
      ? this.engine.dispatchWithRetry(call, this.engine.toolPolicy(itemId, step))
      : this.engine.dispatcher.dispatch(call);
  }

  private async startChild(
    itemId: string,
    params: Record<string, unknown>,
    node: string,
    inflight: Inflight,
  ): Promise<unknown> {
    const maxDepth = this.lineage.maxDepth;
    if (this.lineage.depth + 1 > maxDepth) {
      throw DirigentError.fatal(
        ErrorCode.DEPTH_EXCEEDED,
        `Starting directive "${itemId}" would nest ${this.lineage.depth + 1} levels deep; the limit is ${maxDepth} (<limits depth>).`,
      );
    }
    const spawns = this.directive.limits.spawns ?? ENGINE_DEFAULTS.spawns;
    if (this.spawns >= spawns) {
      throw DirigentError.fatal(
        ErrorCode.SPAWNS_EXCEEDED,
        `This run already started ${this.spawns} child directives; the limit is ${spawns} (<limits spawns>).`,
      );
    }
    this.spawns++;
    const child = await this.engine.startChild(itemId, params, this);
    inflight.childRunId = child.runId;
    this.children[node] = child.runId;
    return this.engine.awaitChild(child);
  }

  private track(cn: CompiledNode, step: StepNode): Inflight {
    const controller = new AbortController();
    const inflight: Inflight = { controller, timer: undefined };
    if (step.timeoutMs !== undefined) {
      const error = DirigentError.retryable(
        ErrorCode.STEP_TIMEOUT,
        `Step "${cn.name}" ran longer than its timeout of ${step.timeoutMs / 1000}s.`,
        { location: step.loc },
      );
      inflight.timer = setTimeout(() => controller.abort(error), step.timeoutMs);
    }
    this.inflight.set(cn.name, inflight);
    return inflight;
  }

  private settleWork(
    cn: CompiledNode,
    inflight: Inflight,
    work: Promise<unknown>,
    policy: StepNode['retry'],
    collect?: string,
  ): void {
    work.then(
      (result) => {
        if (this.inflight.get(cn.name) !== inflight) return;
        this.clearInflight(cn.name, inflight);
        const ctx = this.actor.getSnapshot().context;
        this.finishWith(cn, () =>
          settle(cn, ctx, result, this.engine.env, collect ? { [collect]: result } : undefined),
        );
      },
      (err: unknown) => {
        if (this.inflight.get(cn.name) !== inflight) return;
        this.clearInflight(cn.name, inflight);
        const reason = inflight.controller.signal.aborted ? inflight.controller.signal.reason : err;
        this.fail(cn, reason, policy);
      },
    );
  }

  private clearInflight(node: string, inflight: Inflight): void {
    if (inflight.timer) clearTimeout(inflight.timer);
    this.inflight.delete(node);
  }

  private armWaitTimer(w: WaitingStep): void {
    if (w.deadline === undefined) return;
    const expire = () => {
      this.waiting.delete(w.signal);
      this.clearInflight(w.step, inflight);
      this.fail(
        this.node(w.step),
        DirigentError.fatal(
          ErrorCode.WAIT_TIMEOUT,
          `Step "${w.step}" waited longer than its timeout for signal "${w.signal}".`,
        ),
      );
    };
    const inflight: Inflight = { controller: new AbortController(), timer: undefined };
    this.inflight.set(w.step, inflight);
    const remaining = w.deadline - Date.now();
    if (remaining <= 0) expire();
    else inflight.timer = setTimeout(expire, remaining);
  }

  private finish(cn: CompiledNode, result: unknown): void {
    this.finishWith(cn, () =>
      settle(cn, this.actor.getSnapshot().context, result, this.engine.env),
    );
  }

  private finishWith(cn: CompiledNode, make: () => RunEvent): void {
    let event: RunEvent;
    try {
      event = make();
    } catch (err) {
      this.fail(cn, err);
      return;
    }
    this.send(event);
  }

  private fail(cn: CompiledNode, err: unknown, policy?: StepNode['retry']): void {
    const e = DirigentError.from(err);
    const located =
      e.location || cn.node.loc === undefined
        ? e
        : new DirigentError(e.code, e.message, {
            retryable: e.retryable,
            location: cn.node.loc,
            ...(e.hint && { hint: e.hint }),
            ...(e.details && { details: e.details }),
          });
    this.send({ type: `fail:${cn.name}`, error: located.toJSON(), ...(policy && { policy }) });
  }

  private node(name: string): CompiledNode {
    const cn = this.loaded.compiled.nodes.get(name);
    if (cn === undefined) throw new DirigentError(ErrorCode.INTERNAL, `Unknown node "${name}".`);
    return cn;
  }

  // ---- lifecycle ----

  private onSnapshot(): void {
    const snap = this.actor.getSnapshot();
    if (this.stopped.length > 0) {
      for (const entry of this.stopped) {
        this.record.steps.push(entry);
        this.engine.observer?.stepEnded?.(this.runId, entry);
      }
      this.stopped = [];
    }
    if (snap.status === 'done') this.end(snap.value as unknown as string, snap.context);
    else this.queueIdleCheck();
  }

  /** Soon after the current event: does the run now only wait for signals? */
  queueIdleCheck(): void {
    if (this.idleCheckQueued) return;
    this.idleCheckQueued = true;
    queueMicrotask(() => {
      this.idleCheckQueued = false;
      const snap = this.actor.getSnapshot();
      if (snap.status !== 'active' || this.record.status !== 'running') return;
      const waitingSteps = new Set([...this.waiting.values()].map((w) => w.step));
      const nested: WaitingStep[] = [];
      for (const [node, inflight] of this.inflight) {
        if (waitingSteps.has(node)) continue;
        const child =
          inflight.childRunId === undefined
            ? undefined
            : this.engine.activeRun(inflight.childRunId);
        if (!child?.isWaiting) return; // real work under way
        nested.push(...(child.record.waiting ?? []).map((w) => ({ runId: child.runId, ...w })));
      }
      if (this.backoff.size > 0 || this.waiting.size + nested.length === 0) return;
      this.record.status = 'waiting';
      this.record.waiting = [...this.waiting.values(), ...nested];
      this.engine.observer?.runWaiting?.(this.runId, this.record.waiting);
      this.save();
    });
  }

  private end(final: string, context: RunContext): void {
    if (this.runTimer) clearTimeout(this.runTimer);
    const status =
      final === 'completed' ? 'completed' : final === 'cancelled' ? 'cancelled' : 'failed';
    this.record.status = status;
    this.record.endedAt = Date.now();
    delete this.record.waiting;
    if (status === 'completed') {
      try {
        this.record.outputs = this.engine.outputsOf(this.directive, context);
      } catch (err) {
        const e = DirigentError.from(err);
        this.record.status = 'failed';
        this.record.error = { code: e.code, message: e.message, step: null };
      }
    } else {
      this.record.error = context.runError ?? {
        code: ErrorCode.INTERNAL,
        message: 'The run failed.',
        step: null,
      };
    }
    this.engine.observer?.runEnded?.(this.record);
    this.save();
  }

  private crash(err: unknown): void {
    const e = DirigentError.from(err);
    this.record.status = 'failed';
    this.record.endedAt = Date.now();
    this.record.error = {
      code: ErrorCode.INTERNAL,
      message: `The run's state machine failed: ${e.message}`,
      step: null,
    };
    this.save();
  }

  /** Stores the run, then tells whoever waits for it; a store failure is reported, not swallowed. */
  private save(): void {
    this.stored = this.engine.persist(this).then(
      () => this.notify(),
      (err: unknown) => {
        this.engine.observer?.storeFailed?.(this.runId, DirigentError.from(err));
        this.notify();
      },
    );
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(this.record);
    if (this.isOver()) {
      const enders = this.enders;
      this.enders = [];
      for (const e of enders) e(this.record);
      this.engine.unregister(this);
    }
    if (this.record.status === 'waiting' && this.lineage.parentRunId !== null)
      this.engine.activeRun(this.lineage.parentRunId)?.queueIdleCheck();
  }

  /** Stops timers so the process can exit; a waiting run lives on in the store. */
  release(): void {
    if (this.runTimer) clearTimeout(this.runTimer);
    for (const inflight of this.inflight.values()) if (inflight.timer) clearTimeout(inflight.timer);
    this.actor.stop();
  }
}

/**
 * Instruction text for a person: templates filled in where they resolve and left as written
 * elsewhere (RYE prose mentions templates it does not mean), and the source indentation removed.
 */
function lenientText(text: string, scope: Scope): string {
  let out = text;
  try {
    out = String(compileTemplate(text).evaluate(scope));
  } catch {
    // keep the text as written
  }
  return dedent(out);
}

function dedent(text: string): string {
  const lines = text.split('\n');
  const indents = lines
    .slice(1)
    .filter((l) => l.trim() !== '')
    .map((l) => /^\s*/.exec(l)![0].length);
  const cut = indents.length ? Math.min(...indents) : 0;
  return [lines[0]!.trim(), ...lines.slice(1).map((l) => l.slice(cut))].join('\n').trim();
}

/**
 * Bootstrap tools on a worker: what `dirigent worker` starts by itself beside serving jobs.
 *
 * {@link BootstrapRunner.start} returns at once; in the background it finds the project's bootstrap
 * tools ({@link findBootstrapTools}), orders them ({@link planBootstrap}: priority, then
 * `wait_for`) and goes through them in that order: a `once` tool is run (or waited for, when
 * another worker runs it; see {@link runOnceTool}) before the next tool is considered, a
 * `continuous` tool's loop ({@link ContinuousTool}) is started and left running. Every worker goes
 * through the same order, so the order holds across the deployment.
 *
 * A tool starts only once the tools it waits for are done (`once`, in the deployment) or running
 * (`continuous`, anywhere in the deployment); when one of them failed or will not start, the
 * waiting tool does not start either and the worker logs why, once. {@link BootstrapRunner.stop}
 * (on drain) stops every tool and loop, and releases every claim and lease this worker holds.
 */
import { hostname } from 'node:os';
import type { RedisClient } from '../redis/redis-client.js';
import { ItemResolver } from '../items/item-resolver.js';
import { defaultSpaces, type Space } from '../items/space.js';
import { loadProjectPolicy } from '../policy/project-policy.js';
import { workerTiming } from '../redis/worker-timing.js';
import type { Logger } from '../telemetry/logger.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { ItemDispatcher } from '../tools/item-dispatcher.js';
import type { ToolCall } from '../tools/tool-call.js';
import type { BootstrapContext } from './bootstrap-context.js';
import type { BootstrapTool } from './bootstrap-tool.js';
import { ContinuousTool } from './continuous-tool.js';
import { findBootstrapTools } from './find-bootstrap-tools.js';
import { planBootstrap } from './plan-bootstrap.js';
import { runOnceTool } from './run-once-tool.js';

/** What a {@link BootstrapRunner} needs. */
export interface BootstrapRunnerOptions {
  redis: RedisClient;
  /** The deployment's key prefix. */
  prefix: string;
  /** The project the worker serves. */
  projectDir: string;
  logger: Logger;
  /** Default: the project's spaces (`defaultSpaces(projectDir)`). */
  spaces?: Space[];
  /**
   * TTL of a `once` claim and of a `continuous` lease: how long a dead worker's tool blocks the
   * others. Default `$DIRIGENT_LOCK_MS` (30 s), as for the workers' other locks.
   */
  leaseMs?: number;
  /** How often a worker looks again at a claim or lease held elsewhere; default half the lease, 250 ms to 5 s. */
  pollMs?: number;
  /** Where the tool calls' spans and metrics go. */
  telemetry?: Telemetry;
  /** Runs the tools; default the project's {@link ItemDispatcher}. */
  dispatch?: (call: ToolCall) => Promise<unknown>;
}

/** Whether a tool others wait for got where they need it. */
type Readiness = 'ready' | 'blocked';

/** The bootstrap tools of one worker; see the module comment. */
export class BootstrapRunner {
  private readonly stopping = new AbortController();
  private readonly resolver: ItemResolver;
  private dispatcher: ItemDispatcher | undefined;
  private readonly ctx: BootstrapContext;
  /** Per tool to start: resolves when the tools waiting for it may start, or never will. */
  private readonly readiness = new Map<string, Promise<Readiness>>();
  private readonly loops: Promise<void>[] = [];
  private main: Promise<void> | undefined;

  constructor(private readonly options: BootstrapRunnerOptions) {
    const leaseMs = options.leaseMs ?? workerTiming().lockMs;
    this.resolver = new ItemResolver(options.spaces ?? defaultSpaces(options.projectDir));
    this.ctx = {
      redis: options.redis,
      prefix: options.prefix,
      projectDir: options.projectDir,
      logger: options.logger,
      leaseMs,
      pollMs: options.pollMs ?? Math.min(5_000, Math.max(250, Math.floor(leaseMs / 2))),
      worker: `${hostname()}:${process.pid}`,
      stopping: this.stopping.signal,
      dispatch: options.dispatch ?? ((call) => this.itemDispatcher().dispatch(call)),
    };
  }

  /** Starts the bootstrap tools in the background; returns at once. */
  start(): void {
    this.main ??= this.run().catch((err: unknown) =>
      this.ctx.logger.error(
        { error: String(err) },
        `bootstrap: stopped on an unexpected error: ${String(err)}`,
      ),
    );
  }

  /**
   * Stops every bootstrap tool this worker runs (their signals aborted) and releases its claims and
   * leases; resolves once all have ended.
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.main;
    await Promise.allSettled(this.loops);
    await this.dispatcher?.close();
    this.resolver.close();
  }

  private async run(): Promise<void> {
    const { logger } = this.ctx;
    const found = await findBootstrapTools(this.resolver, this.options.projectDir);
    for (const { itemId, error } of found.problems)
      logger.error(
        { tool: itemId, code: error.code, error: error.message, location: error.location },
        `bootstrap tool "${itemId}" will not start: ${error.code}: ${error.message}`,
      );
    const plan = planBootstrap(found.tools);
    for (const { tool, error } of plan.refused) {
      this.readiness.set(tool.itemId, Promise.resolve('blocked'));
      logger.error(
        { tool: tool.itemId, code: error.code, error: error.message },
        `${error.message}`,
      );
    }
    if (plan.order.length === 0) return;
    logger.info(
      { tools: plan.order.map((t) => t.itemId) },
      `bootstrap: ${plan.order.map((t) => `${t.itemId} (${t.spec.mode}, priority ${t.spec.priority})`).join(', ')}`,
    );
    for (const tool of plan.order) {
      if (this.stopping.signal.aborted) return;
      if (tool.spec.mode === 'once') {
        const outcome = this.afterDependencies(tool).then(async (go): Promise<Readiness> => {
          if (!go) return 'blocked';
          return (await runOnceTool(this.ctx, tool)) === 'done' ? 'ready' : 'blocked';
        });
        this.readiness.set(tool.itemId, outcome);
        await outcome; // once-tools run one after the other, in order
      } else {
        const loop = new ContinuousTool(this.ctx, tool);
        const stopped = new Promise<Readiness>((resolve) =>
          this.stopping.signal.addEventListener('abort', () => resolve('blocked'), { once: true }),
        );
        let go: (ready: boolean) => void = () => undefined;
        const started = new Promise<boolean>((resolve) => (go = resolve));
        this.readiness.set(
          tool.itemId,
          started.then((ok) =>
            ok ? Promise.race([loop.running.then((): Readiness => 'ready'), stopped]) : 'blocked',
          ),
        );
        this.loops.push(
          this.afterDependencies(tool).then((ok) => {
            go(ok);
            return ok ? loop.run() : undefined;
          }),
        );
      }
    }
  }

  /**
   * Resolves true once every tool `tool` waits for is ready; false (after logging why) when one of
   * them failed or will not start, or the worker drains.
   */
  private async afterDependencies(tool: BootstrapTool): Promise<boolean> {
    for (const id of tool.spec.waitFor) {
      const ready = await this.readiness.get(id)!;
      if (this.stopping.signal.aborted) return false;
      if (ready === 'ready') continue;
      this.ctx.logger.error(
        { tool: tool.itemId, mode: tool.spec.mode, waitFor: id },
        `bootstrap tool "${tool.itemId}" (${tool.spec.mode}) will not start: it waits for "${id}", which failed or did not start`,
      );
      return false;
    }
    return true;
  }

  private itemDispatcher(): ItemDispatcher {
    this.dispatcher ??= new ItemDispatcher(this.resolver, {
      limits: loadProjectPolicy(this.options.projectDir).limits,
      ...(this.options.telemetry && { telemetry: this.options.telemetry }),
    });
    return this.dispatcher;
  }
}

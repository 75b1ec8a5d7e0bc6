import type { Attributes } from '@opentelemetry/api';
import type { ConcurrencySpec, RateLimitSpec } from '../locks/lock-spec.js';
import type { TemplatePieces } from '../values/render-pieces.js';

/**
 * A parameter (or a string inside one) that the engine built from a template. Its pieces stay
 * apart until the dispatcher knows the tool, and so the language the text is in (a shell command,
 * a URL): only then are the values written in, as data (`values/render-pieces.ts`).
 */
export interface TemplatedParam extends TemplatePieces {
  /** Where the value goes: the parameter's name, then keys inside it. */
  path: string[];
  /**
   * Slots that read a secret the directive declares, by index, naming the secret. Their values
   * are not in {@link TemplatePieces.values}: the dispatcher reads them where the tool runs.
   */
  secrets?: Record<number, string>;
  /** The `<param>` is marked `allow_options="true"`: its values may be options. */
  allowOptions?: boolean;
}

/**
 * One request to run a tool, as the engine hands it to a {@link ToolDispatcher}.
 *
 * It is structurally a superset of {@link ToolContext}, so a dispatcher can hand the call itself to
 * the tool as its context instead of building a new object per call.
 */
export interface ToolCall {
  /** The tool's item id, e.g. `dirigent/shell/bash`. */
  itemId: string;
  /**
   * The step's parameters after template rendering. Validation coerces and fills defaults in
   * place, so the engine passes a fresh object per call.
   */
  params: Record<string, unknown>;
  /**
   * The parameters built from templates, in pieces (see {@link TemplatedParam}); `params` holds
   * them joined as plain text, secrets as `***`. The dispatcher writes each in for its language.
   */
  templated?: TemplatedParam[];
  /** Absolute path of the project the run belongs to; tools confine file access to it. */
  projectDir: string;
  runId: string;
  /** Name of the step that makes the call. */
  step: string;
  /** 1-based number of this try of the step. */
  attempt: number;
  /**
   * Identifies this call within its run (step entry, attempt, foreach item), and is the same when
   * a resumed run makes the call again: a queue uses it as the job id, so a call that already ran
   * is answered, not repeated.
   */
  callId?: string;
  /**
   * When the call must have ended (epoch ms): the deadline of the step's attempt, for a step with a
   * `<timeout>`. A worker on a queue stops the tool then by itself, whatever became of the process
   * that made the call; in process, the engine's own timer does.
   */
  deadline?: number;
  /**
   * Set when a resumed run makes a call of a step it had under way: the call may have run
   * already, so a queue looks for its job's outcome before anything else.
   */
  repeated?: boolean;
  /**
   * The step's `<lock>` and `<rate_limit>`, keys rendered: workers on a queue enforce them
   * (with the tool's own) before the call runs; in process they do not apply.
   */
  gate?: ToolGate;
  /**
   * The W3C `traceparent` of the span the call belongs to (its step attempt's, then the tool
   * job's or the runtime call's): tools get it as `TRACEPARENT`, so their own spans join the run's
   * trace.
   */
  traceparent?: string;
  /**
   * Set when a span stands for the call already, in a sampled trace: a step's own call, embedded
   * or run in process by the worker driving the run, is told by its step attempt's span
   * (`engine/run-spans.ts`); a tool job's call by the job's span (`redis/job-spans.ts`). Whoever
   * runs the call then records no span of its own for it, and writes here what that span would
   * have said (runtime, primitive, exit code, outcome, where it ran); the span that stands for the
   * call carries it when it ends.
   */
  spanAttributes?: Attributes;
  /**
   * The content hash of the tool's file as the run's submitter resolved it: a worker whose copy
   * differs refuses the call (`TOOL_MISMATCH`) instead of running something else.
   */
  toolHash?: string;
  /**
   * Offered by a durable engine for a step's own call (not a foreach item's): a dispatcher that
   * runs the call in this process, where no queue keeps its outcome, calls it before the tool
   * starts, naming the worker that runs it (see `redis/run-worker/queue-dispatcher.ts`, eager calls). The
   * engine records that in the step, so that a run resumed elsewhere after this process died
   * counts the call as lost with its worker (an attempt, as a lost job is), and it stores the
   * call's outcome at once rather than with the writes it gathers.
   */
  inProcess?: (worker: string) => void;
  /**
   * Aborted when the step times out or the run is cancelled. Its `reason`, when it is a
   * `DirigentError` (e.g. `STEP_TIMEOUT`), is the error the call rejects with.
   */
  signal: AbortSignal;
}

/** Limits a call must pass before it runs; see {@link ToolCall.gate}. */
export interface ToolGate {
  concurrency?: ConcurrencySpec;
  rateLimit?: RateLimitSpec;
}

/**
 * Every span and metric attribute name Dirigent writes, in one place. OpenTelemetry's semantic
 * conventions where one exists (`error.type`, `messaging.*`, `process.*`), `dirigent.*` otherwise.
 */
export const Attr = {
  // ---- runs ----
  /** The directive's item id. */
  DIRECTIVE_ID: 'dirigent.directive.id',
  DIRECTIVE_VERSION: 'dirigent.directive.version',
  RUN_ID: 'dirigent.run.id',
  /** What started the run: cli, api, queue, schedule, event, batch, library, child. */
  RUN_TRIGGER: 'dirigent.run.trigger',
  /** How the run ended: completed, failed, cancelled (or waiting, for a span of a run that waits). */
  RUN_STATUS: 'dirigent.run.status',
  RUN_PARENT_ID: 'dirigent.run.parent_id',
  RUN_DEPTH: 'dirigent.run.depth',
  /** The run's inputs as JSON, only when values are recorded (`DIRIGENT_OTEL_RECORD_VALUES`). */
  RUN_INPUTS: 'dirigent.run.inputs',
  /** The run's outputs as JSON, only when values are recorded. */
  RUN_OUTPUTS: 'dirigent.run.outputs',
  /** Why a worker took up a run: start, signal, cancel, wake, takeover, handover. */
  RUN_TAKEN_UP: 'dirigent.run.taken_up',
  // ---- steps ----
  STEP_NAME: 'dirigent.step.name',
  /** tool, directive, foreach, render, instruction, wait, return, gate, parallel, compensate. */
  STEP_KIND: 'dirigent.step.kind',
  /** 1-based number of the attempt. */
  STEP_ATTEMPT: 'dirigent.step.attempt',
  /** completed, failed, skipped, retried, timed_out, cancelled. */
  STEP_OUTCOME: 'dirigent.step.outcome',
  /** The attempt failed and another follows after this many milliseconds. */
  STEP_RETRY_DELAY_MS: 'dirigent.step.retry_delay_ms',
  /** The attempt was taken over from another process: its span starts where this one took it. */
  STEP_RESUMED: 'dirigent.step.resumed',
  /** The signal a waiting step waits for. */
  STEP_SIGNAL: 'dirigent.step.signal',
  // ---- tools ----
  TOOL_ID: 'dirigent.tool.id',
  /** completed, failed, deferred, cancelled, timed_out. */
  TOOL_OUTCOME: 'dirigent.tool.outcome',
  TOOL_CALL_ID: 'dirigent.tool.call_id',
  /** The call ran in the process that drives its run, not as a job (an eager call). */
  TOOL_IN_PROCESS: 'dirigent.tool.in_process',
  /** The call's parameters as JSON (secrets as ***), only when values are recorded. */
  TOOL_PARAMS: 'dirigent.tool.params',
  /** The tool's result as JSON, only when values are recorded. */
  TOOL_RESULT: 'dirigent.tool.result',
  /** Whether a failure may be retried. */
  ERROR_RETRYABLE: 'dirigent.error.retryable',
  RUNTIME_ID: 'dirigent.runtime.id',
  /** The primitive at the end of the chain (subprocess, http_client, python_host, deno, mcp, builtin). */
  RUNTIME_PRIMITIVE: 'dirigent.runtime.primitive',
  /** concurrency or rate. */
  LOCK_KIND: 'dirigent.lock.kind',
  LOCK_KEY: 'dirigent.lock.key',
  /** Times the job was put back because its lock or rate was taken. */
  LOCK_DEFERRALS: 'dirigent.lock.deferrals',
  /** The worker process: host name and pid. */
  WORKER_ID: 'dirigent.worker.id',
  /**
   * How long a job waited in its queue, ms: from its enqueueing (or its delay's end) to a worker
   * taking it up; on a job's span, at its first take-up.
   */
  QUEUE_WAIT_MS: 'dirigent.queue.wait_ms',
  /** A job state in the queue gauge: waiting, active, delayed, prioritized, completed, failed. */
  QUEUE_STATE: 'dirigent.queue.state',
  // ---- OpenTelemetry semantic conventions ----
  ERROR_TYPE: 'error.type',
  MESSAGING_SYSTEM: 'messaging.system',
  MESSAGING_DESTINATION: 'messaging.destination.name',
  MESSAGING_MESSAGE_ID: 'messaging.message.id',
  MESSAGING_OPERATION_TYPE: 'messaging.operation.type',
  MESSAGING_OPERATION_NAME: 'messaging.operation.name',
  PROCESS_EXIT_CODE: 'process.exit.code',
  PROCESS_PID: 'process.pid',
} as const;

/** Every metric Dirigent records; durations in seconds, as OpenTelemetry recommends. */
export const Metric = {
  /** Histogram (s) of ended runs: directive, status, trigger. */
  RUN_DURATION: 'dirigent.run.duration',
  /** Counter of runs started: directive, trigger. */
  RUN_STARTED: 'dirigent.run.started',
  /** Counter of runs ended: directive, status, trigger. */
  RUN_ENDED: 'dirigent.run.ended',
  /** Gauge of stored runs by status (running, waiting, completed, failed, cancelled). */
  RUN_COUNT: 'dirigent.run.count',
  /** Histogram (s) of step attempts: directive, step kind, outcome. */
  STEP_DURATION: 'dirigent.step.duration',
  /** Counter of step attempts: directive, step, outcome, error type. */
  STEP_ATTEMPTS: 'dirigent.step.attempts',
  /** Histogram (s) of tool calls: tool, outcome. */
  TOOL_DURATION: 'dirigent.tool.duration',
  /** Counter of tool calls: tool, outcome, error type. */
  TOOL_CALLS: 'dirigent.tool.calls',
  /** Histogram (s) from a job's enqueueing to a worker taking it up: queue. */
  QUEUE_WAIT: 'dirigent.queue.wait',
  /** Histogram (s) a tool job waited for its lock or rate: lock kind. */
  LOCK_WAIT: 'dirigent.lock.wait',
  /** Gauge of jobs per queue and state. */
  QUEUE_JOBS: 'dirigent.queue.jobs',
} as const;

/** Bucket boundaries (s) for every duration histogram: 1 ms to an hour. */
export const DURATION_BUCKETS_S = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
  1800, 3600,
];

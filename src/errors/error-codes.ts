/**
 * Every error Dirigent raises carries one of these stable codes. Codes are part of the public
 * contract: the CLI prints them, run records store them, tests assert them. Never rename one.
 */
export const ErrorCode = {
  // Directive files: reading and parsing
  FILE_NOT_FOUND: 'FILE_NOT_FOUND',
  NO_XML_FENCE: 'NO_XML_FENCE',
  UNCLOSED_FENCE: 'UNCLOSED_FENCE',
  XML_SYNTAX: 'XML_SYNTAX',
  NOT_A_DIRECTIVE: 'NOT_A_DIRECTIVE',
  MISSING_ATTRIBUTE: 'MISSING_ATTRIBUTE',
  INVALID_ATTRIBUTE: 'INVALID_ATTRIBUTE',
  UNKNOWN_ELEMENT: 'UNKNOWN_ELEMENT',
  UNKNOWN_ATTRIBUTE: 'UNKNOWN_ATTRIBUTE',
  INVALID_NAME: 'INVALID_NAME',
  INVALID_VERSION: 'INVALID_VERSION',
  DUPLICATE_STEP: 'DUPLICATE_STEP',
  DUPLICATE_INPUT: 'DUPLICATE_INPUT',
  /** A run setting of `<metadata>` (a tag's name, `<priority>`, `<concurrency>`) set twice. */
  DUPLICATE_SETTING: 'DUPLICATE_SETTING',
  /** Two `<answer>`s of one `<instruction>` or `<wait>` with the same name (or both unnamed). */
  DUPLICATE_ANSWER: 'DUPLICATE_ANSWER',
  /**
   * `<answer>` declarations that cannot stand together or where they are: a named answer beside an
   * unnamed one, or an `<answer>` of an element that waits for no answer.
   */
  INVALID_ANSWER: 'INVALID_ANSWER',
  UNKNOWN_STEP: 'UNKNOWN_STEP',
  NEXT_OUTSIDE_BRANCH: 'NEXT_OUTSIDE_BRANCH',
  STEP_ACTION: 'STEP_ACTION',
  EMPTY_PROCESS: 'EMPTY_PROCESS',
  INVALID_TEMPLATE: 'INVALID_TEMPLATE',
  UNKNOWN_TEMPLATE_PATH: 'UNKNOWN_TEMPLATE_PATH',
  INVALID_EXPRESSION: 'INVALID_EXPRESSION',
  /** An expression calls a `$function` that is neither JSONata's or Dirigent's nor bound by it. */
  UNKNOWN_FUNCTION: 'UNKNOWN_FUNCTION',
  /** An expression reads a `$variable` that nothing binds (neither the expression nor a foreach). */
  UNKNOWN_VARIABLE: 'UNKNOWN_VARIABLE',
  INVALID_CONDITION: 'INVALID_CONDITION',
  INVALID_GRAPH: 'INVALID_GRAPH',
  XML_TOO_DEEP: 'XML_TOO_DEEP',
  DIRECTIVE_TOO_LARGE: 'DIRECTIVE_TOO_LARGE',
  // Values that would become code: an environment variable the project does not allow, and a
  // command, program, URL or tool chosen by a value (a warning; an error in strict mode).
  ENV_NOT_ALLOWED: 'ENV_NOT_ALLOWED',
  VALUE_AS_CODE: 'VALUE_AS_CODE',
  // The project's configuration (.ai/config/dirigent.yaml)
  INVALID_CONFIG: 'INVALID_CONFIG',
  // Inputs
  INVALID_INPUTS: 'INVALID_INPUTS',
  // Inputs, signal payloads and values passed to commands larger or deeper than their limits
  INPUT_TOO_LARGE: 'INPUT_TOO_LARGE',
  // Running
  PERMISSION_DENIED: 'PERMISSION_DENIED',
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  UNKNOWN_DIRECTIVE: 'UNKNOWN_DIRECTIVE',
  UNKNOWN_KNOWLEDGE: 'UNKNOWN_KNOWLEDGE',
  INVALID_ITEM_ID: 'INVALID_ITEM_ID',
  INVALID_PARAMS: 'INVALID_PARAMS',
  INVALID_TOOL: 'INVALID_TOOL',
  RUNTIME_UNAVAILABLE: 'RUNTIME_UNAVAILABLE',
  // Keyed concurrency locks and rate limits (src/locks): Redis could not be asked for a lock or a
  // rate (retryable), and a held lock whose lease could not be renewed (retryable: the work
  // should stop, since another job may now hold the slot).
  LOCK_UNAVAILABLE: 'LOCK_UNAVAILABLE',
  LOCK_LOST: 'LOCK_LOST',
  // Executor chains, sandboxes, secrets and signatures
  EXECUTOR_NOT_FOUND: 'EXECUTOR_NOT_FOUND',
  CHAIN_CYCLE: 'CHAIN_CYCLE',
  CHAIN_TOO_DEEP: 'CHAIN_TOO_DEEP',
  CHAIN_UPWARD: 'CHAIN_UPWARD',
  UNKNOWN_PRIMITIVE: 'UNKNOWN_PRIMITIVE',
  INVALID_OUTPUT: 'INVALID_OUTPUT',
  MISSING_SECRET: 'MISSING_SECRET',
  SANDBOX_DENIED: 'SANDBOX_DENIED',
  MEMORY_LIMIT: 'MEMORY_LIMIT',
  HOST_CRASHED: 'HOST_CRASHED',
  HTTP_FAILED: 'HTTP_FAILED',
  MCP_FAILED: 'MCP_FAILED',
  UNSIGNED_ITEM: 'UNSIGNED_ITEM',
  INTEGRITY_FAILED: 'INTEGRITY_FAILED',
  UNTRUSTED_KEY: 'UNTRUSTED_KEY',
  BAD_SIGNATURE: 'BAD_SIGNATURE',
  // Signed, but the signature leaves out text that runs (signatures required).
  PARTIAL_SIGNATURE: 'PARTIAL_SIGNATURE',
  TOOL_EXISTS: 'TOOL_EXISTS',
  TOOL_DISABLED: 'TOOL_DISABLED',
  TOOL_FAILED: 'TOOL_FAILED',
  COMMAND_FAILED: 'COMMAND_FAILED',
  PATH_OUTSIDE_PROJECT: 'PATH_OUTSIDE_PROJECT',
  PATH_PROTECTED: 'PATH_PROTECTED',
  // A value refused where it would be read as code (a shell's arithmetic, eval, a URL's host)
  UNSAFE_VALUE: 'UNSAFE_VALUE',
  // The built-in file tools (src/tools/builtin): a folder where a file is needed or the other way
  // round, a binary or oversized file read as text, a regular expression that does not compile
  // or ran past its time bound, an edit whose text is not in the file (or is there more than
  // once), and line numbers or line ids the file no longer has.
  NOT_A_DIRECTORY: 'NOT_A_DIRECTORY',
  IS_A_DIRECTORY: 'IS_A_DIRECTORY',
  /** A file Dirigent is asked to write (an export's `--out`) cannot be written: no permission, a read-only disk. */
  FILE_NOT_WRITABLE: 'FILE_NOT_WRITABLE',
  BINARY_FILE: 'BINARY_FILE',
  FILE_TOO_LARGE: 'FILE_TOO_LARGE',
  INVALID_PATTERN: 'INVALID_PATTERN',
  SEARCH_TIMEOUT: 'SEARCH_TIMEOUT',
  NO_MATCH: 'NO_MATCH',
  AMBIGUOUS_MATCH: 'AMBIGUOUS_MATCH',
  LINE_OUT_OF_RANGE: 'LINE_OUT_OF_RANGE',
  STALE_LINE_ID: 'STALE_LINE_ID',
  // The built-in web tools: a host the project does not allow, a private address (loopback,
  // RFC 1918, link-local, …) it has not opened, redirects that loop or go on too long, a
  // response over its size cap or past its time, and content a page reader cannot turn into text.
  NETWORK_DENIED: 'NETWORK_DENIED',
  PRIVATE_ADDRESS: 'PRIVATE_ADDRESS',
  TOO_MANY_REDIRECTS: 'TOO_MANY_REDIRECTS',
  REDIRECT_LOOP: 'REDIRECT_LOOP',
  RESPONSE_TOO_LARGE: 'RESPONSE_TOO_LARGE',
  HTTP_TIMEOUT: 'HTTP_TIMEOUT',
  UNSUPPORTED_CONTENT: 'UNSUPPORTED_CONTENT',
  // `dirigent tool test`: a tool with no examples to run.
  NO_EXAMPLES: 'NO_EXAMPLES',
  RESULT_TOO_LARGE: 'RESULT_TOO_LARGE',
  STEP_TIMEOUT: 'STEP_TIMEOUT',
  RUN_TIMEOUT: 'RUN_TIMEOUT',
  WAIT_TIMEOUT: 'WAIT_TIMEOUT',
  MAX_STEPS_EXCEEDED: 'MAX_STEPS_EXCEEDED',
  DEPTH_EXCEEDED: 'DEPTH_EXCEEDED',
  SPAWNS_EXCEEDED: 'SPAWNS_EXCEEDED',
  FOREACH_NOT_ARRAY: 'FOREACH_NOT_ARRAY',
  TEMPLATE_PATH_MISSING: 'TEMPLATE_PATH_MISSING',
  EXPRESSION_FAILED: 'EXPRESSION_FAILED',
  /** `$parse` was given a text that is not JSON, or too large or deep. */
  INVALID_JSON: 'INVALID_JSON',
  BRANCH_FAILED: 'BRANCH_FAILED',
  /**
   * A failed or cancelled run one of whose compensations failed for good: the run is `failed`, its
   * error keeps why it ended first (`cause`) and each compensation that failed.
   */
  COMPENSATION_FAILED: 'COMPENSATION_FAILED',
  CHILD_FAILED: 'CHILD_FAILED',
  CANCELLED: 'CANCELLED',
  RUN_NOT_FOUND: 'RUN_NOT_FOUND',
  REDIS_UNAVAILABLE: 'REDIS_UNAVAILABLE',
  RUN_NOT_WAITING: 'RUN_NOT_WAITING',
  // Cancelling a run that has already completed, failed or been cancelled.
  RUN_ENDED: 'RUN_ENDED',
  RUN_CONFLICT: 'RUN_CONFLICT',
  /** A redrive of a run that did not fail and was not cancelled, or cannot go on (its details say why). */
  RUN_NOT_REDRIVABLE: 'RUN_NOT_REDRIVABLE',
  /** What only an ended run can be asked (a rerun), asked of one that goes on. */
  RUN_NOT_ENDED: 'RUN_NOT_ENDED',
  /**
   * A worker's write to a run that another worker has taken over (the writer's lease lapsed: it
   * was cut off from Redis, or paused): the write is refused and the writer stops driving the run.
   */
  RUN_TAKEN_OVER: 'RUN_TAKEN_OVER',
  /** A run that another live worker drives now; the job asking for it comes back shortly. */
  RUN_BUSY: 'RUN_BUSY',
  /** The worker running a tool call died (or lost its lease) before the call ended. */
  WORKER_LOST: 'WORKER_LOST',
  UNKNOWN_SIGNAL: 'UNKNOWN_SIGNAL',
  /**
   * A signal whose payload does not match the `<answer>` declarations of the step waiting for it:
   * refused, and the run keeps waiting as it was.
   */
  INVALID_PAYLOAD: 'INVALID_PAYLOAD',
  DIRECTIVE_CHANGED: 'DIRECTIVE_CHANGED',
  /** A worker's copy of the run's directive differs from the one the run was started with. */
  DIRECTIVE_MISMATCH: 'DIRECTIVE_MISMATCH',
  /** A stored run whose directive text the store no longer has (its key was deleted by hand). */
  RUN_SOURCE_MISSING: 'RUN_SOURCE_MISSING',
  /** A worker's copy of a tool differs from the one the run's submitter resolved. */
  TOOL_MISMATCH: 'TOOL_MISMATCH',
  /** A request (API, queue trigger, library call) that is malformed in itself. */
  INVALID_REQUEST: 'INVALID_REQUEST',
  /** An idempotency key used again for another directive or other inputs. */
  IDEMPOTENCY_CONFLICT: 'IDEMPOTENCY_CONFLICT',
  /** An operation only a Redis deployment offers (schedules), asked of an embedded project. */
  NEEDS_REDIS: 'NEEDS_REDIS',
  /** No schedule with that id. */
  UNKNOWN_SCHEDULE: 'UNKNOWN_SCHEDULE',
  /** No batch with that id in the project. */
  UNKNOWN_BATCH: 'UNKNOWN_BATCH',
  // The item interface (search, load, execute, sign): an item whose file does not hold what its
  // kind needs (validation before signing, knowledge front matter), a query that does not parse,
  // a copy or a signature the spaces do not allow (system space is read-only), a signature
  // requested with no signing key, and an item that exists already where a copy would go.
  INVALID_ITEM: 'INVALID_ITEM',
  INVALID_QUERY: 'INVALID_QUERY',
  SPACE_READ_ONLY: 'SPACE_READ_ONLY',
  NO_SIGNING_KEY: 'NO_SIGNING_KEY',
  ITEM_EXISTS: 'ITEM_EXISTS',
  INTERNAL: 'INTERNAL',
  // The HTTP API (src/api): a request without a valid bearer token, a route that does not exist,
  // a body larger than the server takes or of a type it does not read, a client over its rate
  // limit, and a server that cannot take runs now (no worker on Redis, or shutting down).
  UNAUTHORIZED: 'UNAUTHORIZED',
  NOT_FOUND: 'NOT_FOUND',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  RATE_LIMITED: 'RATE_LIMITED',
  NOT_READY: 'NOT_READY',
} as const;

/** One of the stable error codes in {@link ErrorCode}. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const KNOWN_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

/**
 * Whether `value` is one of this version's {@link ErrorCode}s. A code read from outside (a run
 * record, a job from another worker) may be one a newer version added.
 */
export function isErrorCode(value: string): value is ErrorCode {
  return KNOWN_CODES.has(value);
}

/**
 * The operations every face calls (DESIGN.md, "One set of operations, several faces"): start,
 * run, read, list, wait for, cancel and signal runs, embedded or on a Redis deployment alike.
 * The CLI, the HTTP API, the queue trigger and a library user call these; a face only translates
 * arguments in and results or `DirigentError`s out.
 *
 * ```ts
 * const dirigent = await Dirigent.open({ project: '.', redis: process.env.REDIS_URL });
 * const record = await dirigent.run({ directive: 'hello', inputs: { name: 'Ada' } });
 * await dirigent.close();
 * ```
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { DirectiveLoader, type LoadedDirective } from '../engine/directive-loader.js';
import type { EngineObserver } from '../engine/engine-options.js';
import { queuedRecord, type RunRecord } from '../engine/run-record.js';
import { validateInputs } from '../engine/validate-inputs.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { checkSignalPayload } from '../policy/check-json-size.js';
import { DEFAULT_PREFIX } from '../queue/queue-names.js';
import type { RunTrigger } from '../telemetry/run-trace.js';
import { Telemetry, type TelemetryOptions } from '../telemetry/telemetry.js';
import { EmbeddedBackend } from './embedded-backend.js';
import {
  checkIdempotencyKey,
  DEFAULT_IDEMPOTENCY_WINDOW_MS,
  FileIdempotency,
  fingerprintOf,
  RedisIdempotency,
  type IdempotencyStore,
} from './idempotency.js';
import type { RunBackend, Watch } from './run-backend.js';
import type { RunFilter, RunPage } from './run-filter.js';
import type { BatchOptions, BatchReport, BatchStatus } from './batch.js';
import { infoOf, listDirectives, type DirectiveInfo } from './directive-catalog.js';
import { diagnosticsOf } from '../directive/diagnostics.js';
import type { Diagnostic } from '../directive/ast.js';
import { randomUUID } from 'node:crypto';
import { cronProblem, EVENT_NAME } from '../directive/read-triggers.js';
import type { SerializedError } from '../errors/dirigent-error.js';
import { DECLARED, ScheduleBook, type Schedule } from './schedule-book.js';
import { ItemOperations } from './item-operations.js';

/** What {@link Dirigent.open} takes. */
export interface DirigentOptions {
  /** The project: its directives and tools, `.ai/config/dirigent.yaml` (default: the current folder). */
  project?: string;
  /**
   * A Redis URL: runs go to the workers of that deployment. Without it, runs run in this process
   * and are kept in the project's `.dirigent/`.
   */
  redis?: string;
  /** The deployment's key prefix on Redis (default `$DIRIGENT_PREFIX` or `dirigent`). */
  prefix?: string;
  /** Where spans and metrics go (see `telemetry/telemetry.ts`); default none. */
  telemetry?: Telemetry | TelemetryOptions;
  /** How long an idempotency key holds its run (default 24 h). */
  idempotencyWindowMs?: number;
}

/** What starts a run. */
export interface StartRequest {
  /** The directive's item id (`.ai/directives/<id>.md` in a space of the project). */
  directive: string;
  inputs?: Record<string, unknown>;
  /** The same key within its window starts one run: later requests get that run. */
  idempotencyKey?: string;
  /** What started the run, for its telemetry (default `library`). */
  trigger?: RunTrigger;
  /** Hears the run's steps as they go. */
  observer?: EngineObserver;
  /**
   * Let `directive` be a file path too (the CLI: the person at the terminal names files). Never
   * for requests from elsewhere: a path could name any file of the machine.
   */
  allowFile?: boolean;
}

/** A started run: its id, and whether this request started it (false: its idempotency key's run). */
export interface StartedRun {
  runId: string;
  created: boolean;
  /** Its record as it stood when `start` resolved (`queued` on Redis, unless an earlier run). */
  record: RunRecord;
}

/** What {@link Dirigent.emit} started: each subscriber's run, or the error that kept it from starting. */
export interface Emitted {
  event: string;
  id: string;
  runs: ({ directive: string } & (Omit<StartedRun, 'record'> | { error: SerializedError }))[];
}

/** Directives kept loaded by item id (see {@link Dirigent.load}). */
const LOADED_LIMIT = 500;

/** What a run id may be: letters, digits, `_` and `-` (a UUID, or a caller's own). */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** Refuses a run id no run can have (`INVALID_REQUEST`), before any store is asked. */
function checkRunId(runId: string): void {
  if (RUN_ID.test(runId)) return;
  throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `"${runId.slice(0, 80)}" is not a run id.`, {
    hint: 'Run ids are letters, digits, _ and -, up to 128 characters, as `start` returns them.',
  });
}

/** Checks a cron expression and time zone as `<schedule>` does: `INVALID_REQUEST` otherwise. */
function checkCron(cron: string, timezone: string | undefined): void {
  const problem = cronProblem(cron, timezone);
  if (problem !== undefined)
    throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, problem.message, { hint: problem.hint });
}

/** What {@link Dirigent.validate} finds. */
export interface Validation {
  valid: boolean;
  errors: Diagnostic[];
  warnings: Diagnostic[];
  /** What the directive offers, when it is valid. */
  directive?: DirectiveInfo;
}

/** See the module comment. */
export class Dirigent {
  private constructor(
    readonly projectDir: string,
    readonly loader: DirectiveLoader,
    private readonly backend: RunBackend,
    private readonly claims: IdempotencyStore,
    private readonly windowMs: number,
    /** A Redis deployment's schedules (none embedded). */
    private readonly book?: ScheduleBook,
  ) {}

  /** Directives loaded, by item id (or `\0` and file), with what says they are current. */
  private readonly loaded = new Map<string, { loaded: LoadedDirective; stamp: string }>();

  /**
   * Opens a project, embedded or on Redis. Rejects with `REDIS_UNAVAILABLE` when the Redis URL
   * does not answer, and with `INVALID_CONFIG` for a malformed project configuration.
   */
  static async open(options: DirigentOptions = {}): Promise<Dirigent> {
    const projectDir = resolve(options.project ?? process.cwd());
    const loader = new DirectiveLoader(projectDir);
    const telemetry = Telemetry.of(options.telemetry);
    const windowMs = options.idempotencyWindowMs ?? DEFAULT_IDEMPOTENCY_WINDOW_MS;
    if (options.redis === undefined) {
      const backend = new EmbeddedBackend(projectDir, loader, telemetry);
      return new Dirigent(projectDir, loader, backend, new FileIdempotency(projectDir), windowMs);
    }
    // The Redis side is loaded only when used: an embedded run never pays for BullMQ.
    const [{ connectRedis, pingRedis, redisDownMessage }, { RedisBackend }] = await Promise.all([
      import('../queue/redis-connection.js'),
      import('./redis-backend.js'),
    ]);
    if (!(await pingRedis(options.redis, 2000)))
      throw DirigentError.fatal(ErrorCode.REDIS_UNAVAILABLE, redisDownMessage(options.redis), {
        hint: 'Without a Redis URL, runs are embedded in this process.',
      });
    const redis = connectRedis(options.redis);
    const prefix = options.prefix ?? (process.env.DIRIGENT_PREFIX || DEFAULT_PREFIX);
    const backend = new RedisBackend(redis, prefix, loader, telemetry);
    const claims = new RedisIdempotency(redis, prefix);
    const book = new ScheduleBook(redis, prefix);
    return new Dirigent(projectDir, loader, backend, claims, windowMs, book);
  }

  private itemOperations: ItemOperations | undefined;

  /** The item interface: search, load, execute and sign directives, tools and knowledge. */
  get items(): ItemOperations {
    this.itemOperations ??= new ItemOperations(this);
    return this.itemOperations;
  }

  /** `embedded` or `redis`. */
  get mode(): 'embedded' | 'redis' {
    return this.backend.mode;
  }

  /**
   * The directive a request names, read, verified and compiled: `UNKNOWN_DIRECTIVE`,
   * `INVALID_ITEM_ID`, signature errors and the directive's own located errors otherwise.
   */
  async load(directive: string, allowFile = false): Promise<LoadedDirective> {
    // A directive is read, verified and compiled once while its file stays as it was: by item
    // id, while the resolver (which watches the spaces) sees no change; by file, while its size
    // and modification time stay the same. A start then costs at most one stat.
    let file: string | undefined;
    let stamp: string;
    let key = directive;
    if (allowFile) {
      file = await this.loader.resolve(directive);
      const info = await stat(file).catch(() => undefined);
      stamp = `${info?.mtimeMs}:${info?.size}`;
      key = `\0${file}`;
    } else stamp = String(this.loader.items.generation);
    const known = this.loaded.get(key);
    if (known !== undefined && known.stamp === stamp) return known.loaded;
    file ??= (await this.loader.items.resolve('directive', directive)).file;
    const loaded = await this.loader.loadFile(file);
    if (this.loaded.size >= LOADED_LIMIT) this.loaded.delete(this.loaded.keys().next().value!);
    this.loaded.set(key, { loaded, stamp });
    return loaded;
  }

  /**
   * Starts a run and resolves with its id once it is under way (embedded) or queued (Redis).
   * Nothing starts when the directive or the inputs are invalid (`INVALID_INPUTS` lists every
   * problem). With an idempotency key, the key's run is returned if it has one.
   */
  async start(request: StartRequest): Promise<StartedRun> {
    const loaded = await this.load(request.directive, request.allowFile);
    const inputs = validateInputs(
      loaded.compiled.directive,
      request.inputs ?? {},
      this.loader.policy.limits,
    );
    let runId: string = randomUUID();
    if (request.idempotencyKey !== undefined) {
      checkIdempotencyKey(request.idempotencyKey);
      const claim = await this.claims.claim(
        request.idempotencyKey,
        fingerprintOf(loaded.itemId, inputs),
        this.windowMs,
      );
      runId = claim.runId;
      // The key's run: one that exists, or one its claimer is still starting. A run claimed by a
      // starter that died first is started here: the run id is the same, so a queue keeps one job.
      if (!claim.created) {
        const earlier = await this.backend.get(runId);
        if (earlier !== undefined) return { runId, created: false, record: earlier };
        // Its claimer is still starting it: it is as good as queued.
        if (claim.pending)
          return { runId, created: false, record: queuedRecord(runId, loaded.itemId, Date.now()) };
      }
    }
    const record = await this.backend.start(loaded, inputs, {
      runId,
      trigger: request.trigger ?? 'library',
      ...(request.observer && { observer: request.observer }),
    });
    return { runId, created: true, record };
  }

  /**
   * Checks a start without starting anything: the directive loads, verifies and compiles, and
   * `inputs` are valid for it. Resolves with the inputs as the run would get them (defaults
   * filled, types coerced); throws what {@link start} would.
   */
  async check(
    directive: string,
    inputs: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    const loaded = await this.load(directive);
    return validateInputs(loaded.compiled.directive, inputs, this.loader.policy.limits);
  }

  /** Starts a run and resolves with its record once it ends or waits (see {@link start}). */
  async run(request: StartRequest): Promise<RunRecord> {
    const { runId } = await this.start(request);
    return this.backend.wait(runId);
  }

  /** The run's record; `RUN_NOT_FOUND` when there is none (never started, or expired). */
  async get(runId: string): Promise<RunRecord> {
    checkRunId(runId);
    const record = await this.backend.get(runId);
    if (record !== undefined) return record;
    throw DirigentError.fatal(ErrorCode.RUN_NOT_FOUND, `No run with id ${runId}.`, {
      hint: 'List runs (`dirigent runs`, `GET /v1/runs`); ended runs are kept for the retention period.',
    });
  }

  /** Runs, newest first, a page at a time. */
  list(filter: RunFilter = {}): Promise<RunPage> {
    return this.backend.list(filter);
  }

  /** The run's record once it ends or waits, or as it stands after `timeoutMs`. */
  wait(runId: string, options: { timeoutMs?: number } = {}): Promise<RunRecord> {
    checkRunId(runId);
    return this.backend.wait(runId, options.timeoutMs);
  }

  /** Cancels a run (stopping its running work) and resolves with its record. */
  cancel(runId: string, reason = 'Cancelled.'): Promise<RunRecord> {
    checkRunId(runId);
    return this.backend.cancel(runId, reason);
  }

  /**
   * Sends signal `name` with `payload` (the waiting step's result) to a waiting run; resolves once
   * the run ends or waits again. `UNKNOWN_SIGNAL` when nothing waits for it, `RUN_NOT_WAITING`
   * when the run no longer waits, `INPUT_TOO_LARGE` for an oversized payload.
   */
  signal(
    runId: string,
    name: string,
    payload: unknown,
    options: { observer?: EngineObserver } = {},
  ): Promise<RunRecord> {
    checkRunId(runId);
    checkSignalPayload(name, payload, this.loader.policy.limits);
    return this.backend.signal(runId, name, payload, options.observer);
  }

  /**
   * The run's record as it stands, and from then on its steps as they go, told to `observer`
   * until `stop()`: nothing the record shows is told again, nothing after it is missed.
   */
  watch(runId: string, observer: EngineObserver): Promise<Watch> {
    checkRunId(runId);
    return this.backend.watch(runId, observer);
  }

  /** The directives of the project's spaces, with their inputs, and why any cannot run. */
  directives(): Promise<DirectiveInfo[]> {
    return listDirectives(this.loader);
  }

  /**
   * Checks a directive without running it: one of the project's by item id, or a text (read as
   * the content of a directive file, under the project's policy). Never throws for the
   * directive's own problems: they are the answer.
   */
  async validate(request: { directive: string } | { source: string }): Promise<Validation> {
    try {
      const loaded =
        'source' in request
          ? this.loader.fromText(this.loader.fileOf('_request', '.md'), request.source)
          : await this.load(request.directive);
      const info = infoOf(loaded, 'project');
      return { valid: true, errors: [], warnings: info.warnings, directive: info };
    } catch (err) {
      const e = DirigentError.from(err);
      // A directive the project does not hold is the request's problem, not a finding.
      if ('directive' in request && e.code === ErrorCode.UNKNOWN_DIRECTIVE) throw e;
      return { valid: false, errors: diagnosticsOf(e), warnings: [] };
    }
  }

  /**
   * Sends event `event` (payload: a JSON object, the runs' input `event`): every directive of the
   * project that runs on it (`<on event>`) is started once per event id (default: a new one),
   * however often the same event is sent. Resolves with each subscriber's run, or why it could
   * not start.
   */
  async emit(event: string, payload: unknown, options: { id?: string } = {}): Promise<Emitted> {
    if (!EVENT_NAME.test(event))
      throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `"${event}" is not an event name.`, {
        hint: 'Event names are letters, digits and . _ : - (order.created), up to 128 characters.',
      });
    const id = options.id ?? randomUUID();
    checkIdempotencyKey(id);
    checkSignalPayload(event, payload, this.loader.policy.limits);
    const subscribers = (await this.directives()).filter(
      (d) => d.valid && d.events.includes(event),
    );
    const runs = await Promise.all(
      subscribers.map(async ({ directive }) => {
        try {
          const { runId, created } = await this.start({
            directive,
            inputs: { event: payload },
            idempotencyKey: `event:${event}:${id}:${directive}`,
            trigger: 'event',
          });
          return { directive, runId, created };
        } catch (err) {
          return { directive, error: DirigentError.from(err).toJSON() };
        }
      }),
    );
    return { event, id, runs };
  }

  /** The deployment's schedules (`NEEDS_REDIS` embedded). */
  schedules(): Promise<Schedule[]> {
    return this.scheduleBook().list();
  }

  /**
   * Adds (or, with the same id, replaces) a schedule: a run of `directive` with `inputs` per tick
   * of `cron` in `timezone`. The directive, the inputs and the cron expression are checked first.
   */
  async addSchedule(request: {
    directive: string;
    cron: string;
    timezone?: string;
    inputs?: Record<string, unknown>;
    id?: string;
  }): Promise<Schedule> {
    const book = this.scheduleBook();
    const loaded = await this.load(request.directive);
    const inputs = validateInputs(
      loaded.compiled.directive,
      request.inputs ?? {},
      this.loader.policy.limits,
    );
    checkCron(request.cron, request.timezone);
    const id =
      request.id ??
      `${loaded.itemId}:${fingerprintOf(`${request.cron} ${request.timezone ?? ''}`, inputs).slice(0, 12)}`;
    if (id.startsWith(DECLARED) || !/^[!-~]{1,200}$/.test(id))
      throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `"${id}" cannot be a schedule's id.`, {
        hint: `Ids are printable without spaces, up to 200 characters, and do not start with "${DECLARED}" (kept for schedules declared in directives).`,
      });
    const schedule = {
      id,
      directive: loaded.itemId,
      cron: request.cron,
      ...(request.timezone !== undefined && { timezone: request.timezone }),
      inputs,
    };
    await book.put(schedule);
    return schedule;
  }

  /** Removes a schedule (`UNKNOWN_SCHEDULE` when there is none with that id). */
  removeSchedule(id: string): Promise<void> {
    return this.scheduleBook().remove(id);
  }

  /**
   * Registers the schedules the project's directives declare (`<schedule>`), as ids
   * `directive:<item id>#<name>`, and removes declared ones no directive declares any more.
   * Workers do this when they start.
   */
  async syncSchedules(): Promise<{ kept: number; removed: string[] }> {
    const book = this.scheduleBook();
    const declared = [];
    for (const d of await this.directives()) {
      if (!d.valid) continue;
      const loaded = await this.load(d.directive);
      for (const s of d.schedules)
        declared.push({
          id: `${DECLARED}${d.directive}#${s.name}`,
          directive: d.directive,
          cron: s.cron,
          ...(s.timezone !== undefined && { timezone: s.timezone }),
          inputs: validateInputs(loaded.compiled.directive, s.inputs, this.loader.policy.limits),
        });
    }
    return book.sync(declared);
  }

  private scheduleBook(): ScheduleBook {
    if (this.book !== undefined) return this.book;
    throw DirigentError.fatal(ErrorCode.NEEDS_REDIS, 'Schedules need a Redis deployment.', {
      hint: 'Pass --redis <url> or set REDIS_URL: the workers of a deployment fire schedules.',
    });
  }

  /**
   * Runs (or, the same batch again, resumes) a batch: one run per input of a JSONL or CSV file or
   * stream, results appended to its results file (see `operations/batch.ts`).
   */
  async batch(options: BatchOptions): Promise<BatchReport> {
    return (await import('./batch.js')).runBatchFile(this, options);
  }

  /** Resumes a batch by id, as it was started. */
  async resumeBatch(
    batchId: string,
    options: Parameters<typeof import('./batch.js').resumeBatch>[2] = {},
  ): Promise<BatchReport> {
    return (await import('./batch.js')).resumeBatch(this, batchId, options);
  }

  /** How a batch stands, and its results so far (`results` names the file). */
  async batchStatus(batchId: string): Promise<BatchStatus> {
    return (await import('./batch.js')).batchStatus(this.projectDir, batchId);
  }

  /** Whether runs can be taken up now: always embedded; on Redis, when a worker listens. */
  ready(): Promise<{ ok: boolean; detail: string }> {
    return this.backend.ready();
  }

  /**
   * Closes what this object opened. Embedded, runs under way get `graceMs` (default 0) to end or
   * wait, and the rest are cancelled, so each is recorded; runs that wait live on in
   * `.dirigent/`, and work that was stopped has stopped before this resolves. On Redis, runs go on
   * on the workers.
   */
  async close(options: { graceMs?: number } = {}): Promise<void> {
    await this.book?.close();
    await this.itemOperations?.close();
    await this.backend.close(options.graceMs);
  }
}

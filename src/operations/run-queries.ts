/**
 * What a console reads of runs (`Dirigent.runs`): one run's whole view, how many runs there are by
 * status, and the runs as they change. Operations like the others: the HTTP API serves them to
 * the web console, and a library user may call them.
 */
import type { DirectiveLoader, LoadedDirective } from '../engine/directive-loader.js';
import type { RunRecord } from '../engine/run-record.js';
import { checkRunId } from './check-run-id.js';
import type { RunBackend } from '../run-backend/run-backend.js';
import type { CountFilter, RunCounts } from '../run-backend/run-counts.js';
import { RunListFeed, type RunListListener } from './run-list-feed.js';
import { runViewOf, type RunView } from './run-view.js';

/** What {@link RunQueries} reads with: the operations' records, directives and loader. */
export interface QueryTarget {
  readonly projectDir: string;
  readonly loader: Pick<DirectiveLoader, 'fromText'>;
  get(runId: string): Promise<RunRecord>;
  load(directive: string): Promise<LoadedDirective>;
}

/** See the module comment. */
export class RunQueries {
  private feed: RunListFeed | undefined;

  constructor(
    private readonly target: QueryTarget,
    private readonly backend: RunBackend,
  ) {}

  /**
   * All a page shows of a run: inputs, each step's result and error, child and parent runs,
   * trace id, the directive's text and graph, the waterfall of its steps. From what the store
   * keeps, or, while a run waits for a worker to take it up, from its record and the directive as
   * the project holds it now. `RUN_NOT_FOUND` when there is no such run.
   */
  async inspect(runId: string): Promise<RunView> {
    checkRunId(runId);
    const stored = await this.backend.stored(runId);
    const record = stored?.record ?? (await this.target.get(runId));
    const current =
      stored === undefined
        ? await this.target.load(record.directive).catch(() => {
            /* Removed or broken since the run started: the view shows the run as it ran. */
            return undefined;
          })
        : undefined;
    return runViewOf(
      record,
      stored,
      this.target.projectDir,
      (file, text) => this.target.loader.fromText(file, text),
      current,
    );
  }

  /** How many runs match `filter` (directive, start time), in all and by status. */
  counts(filter: CountFilter = {}): Promise<RunCounts> {
    return this.backend.counts(filter);
  }

  /**
   * Tells `listener` of the runs that start or change status from now on, in batches, until the
   * returned function is called. Every watcher shares one look at the store every 500 ms.
   */
  watch(listener: RunListListener): () => void {
    this.feed ??= new RunListFeed(() => this.backend.changes());
    return this.feed.subscribe(listener);
  }
}

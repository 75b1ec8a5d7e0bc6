/**
 * Gathers the starts a client makes in one turn of the event loop into groups (see
 * `start-group.ts`): a burst of starts becomes a few jobs instead of one each, while a start made
 * alone is sent at once, as its own job, after that turn. A group holds at most `maxRuns` starts
 * and, past its first, at most `maxWeight` of their weight (the size of their inputs), so that
 * runs with large inputs do not make one huge job.
 */

/** A start waiting to be sent, and who waits for its run id. */
export interface GatheredStart<T> {
  start: T;
  resolve: (runId: string) => void;
  reject: (err: unknown) => void;
}

/** Sends starts gathered in one turn, at most `maxRuns` per group. */
export class StartGatherer<T> {
  private pending: GatheredStart<T>[] = [];
  /**
   * The weight of the pending starts, weighed once a second start comes: a start sent alone (the
   * usual case of a client starting runs one by one) is never weighed.
   */
  private weight: number | undefined;
  private scheduled: NodeJS.Immediate | undefined;
  private readonly sending = new Set<Promise<void>>();

  /**
   * `send` sends one group and resolves with its runs' ids, in order (or rejects, failing them
   * all).
   */
  constructor(
    private readonly maxRuns: number,
    private readonly send: (starts: readonly T[]) => Promise<string[]>,
    private readonly weigh: (start: T) => number = () => 0,
    private readonly maxWeight = Infinity,
  ) {}

  /** Resolves with the run's id once the job that holds its start is in the queue. */
  add(start: T): Promise<string> {
    if (this.pending.length > 0) {
      this.weight ??= this.weigh(this.pending[0]!.start);
      const weight = this.weigh(start);
      if (this.weight + weight <= this.maxWeight) this.weight += weight;
      else {
        this.flush();
        this.weight = weight; // it starts the next group
      }
    }
    return new Promise<string>((resolve, reject) => {
      this.pending.push({ start, resolve, reject });
      if (this.pending.length >= this.maxRuns) this.flush();
      else this.scheduled ??= setImmediate(() => this.flush());
    });
  }

  /** Sends what is gathered now, and resolves once every group sent so far is in the queue. */
  async settle(): Promise<void> {
    this.flush();
    await Promise.all(this.sending);
  }

  private flush(): void {
    if (this.scheduled !== undefined) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    const group = this.pending;
    if (group.length === 0) return;
    this.pending = [];
    this.weight = undefined;
    const sent = this.send(group.map((g) => g.start)).then(
      (ids) => group.forEach((g, i) => g.resolve(ids[i]!)),
      (err: unknown) => group.forEach((g) => g.reject(err)),
    );
    this.sending.add(sent);
    void sent.finally(() => this.sending.delete(sent));
  }
}

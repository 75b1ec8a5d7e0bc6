/** One kind of error of a batch, most frequent first in {@link ErrorTally.top}. */
export interface ErrorGroup {
  code: string;
  /** The message, when every error of the group had the same; else its normalised form (`job <n> failed`). */
  message: string;
  count: number;
  /** The first few lines (inputs) that had it, in the order they were told. */
  lines: number[];
}

/** How an {@link ErrorTally} is bounded. */
export interface ErrorTallyOptions {
  /** Distinct groups kept at most (default 1000); past it the rarest are dropped. */
  maxGroups?: number;
  /** Lines kept per group (default 5). */
  linesPerGroup?: number;
}

interface Group extends ErrorGroup {
  /** Whether messages of the group differed (then `message` is the normalised one). */
  varied: boolean;
  first: string;
}

const MAX_MESSAGE = 300;

/**
 * Counts a batch's errors by kind, for its summary: errors group by code and by message with the
 * numbers and ids in it normalised, so `job 123 failed` and `job 456 failed` are one group. Memory
 * is bounded: at most `maxGroups` groups (when full, the rarer half is dropped, and its errors
 * counted in {@link ErrorTally.dropped}), a few lines each, and messages cut to 300 characters.
 */
export class ErrorTally {
  private readonly groups = new Map<string, Group>();
  private readonly maxGroups: number;
  private readonly linesPerGroup: number;
  private errors = 0;
  private droppedErrors = 0;

  constructor(options: ErrorTallyOptions = {}) {
    this.maxGroups = Math.max(2, options.maxGroups ?? 1000);
    this.linesPerGroup = Math.max(0, options.linesPerGroup ?? 5);
  }

  /** Counts the error of input `line`. */
  add(line: number, error: { code: string; message: string }): void {
    this.errors++;
    const message =
      error.message.length > MAX_MESSAGE ? error.message.slice(0, MAX_MESSAGE) : error.message;
    const normal = normaliseMessage(message);
    const key = `${error.code}\u0000${normal}`;
    let group = this.groups.get(key);
    if (group === undefined) {
      if (this.groups.size >= this.maxGroups) this.prune();
      group = {
        code: error.code,
        message: normal,
        first: message,
        varied: false,
        count: 0,
        lines: [],
      };
      this.groups.set(key, group);
    } else if (!group.varied && group.first !== message) {
      group.varied = true;
    }
    group.count++;
    if (group.lines.length < this.linesPerGroup) group.lines.push(line);
  }

  /** The `n` most frequent groups, most frequent first (ties: the one seen first). */
  top(n = 5): ErrorGroup[] {
    return [...this.groups.values()]
      .sort((a, b) => b.count - a.count)
      .slice(0, Math.max(0, n))
      .map((g) => ({
        code: g.code,
        message: g.varied ? g.message : g.first,
        count: g.count,
        lines: [...g.lines],
      }));
  }

  /** Errors told so far. */
  get total(): number {
    return this.errors;
  }

  /** Errors whose group was dropped to keep the tally bounded (they are in no group of {@link top}). */
  get dropped(): number {
    return this.droppedErrors;
  }

  /** Drops the rarer half of the groups (among equals, the ones seen first: they had longest to recur). */
  private prune(): void {
    const rare = [...this.groups.entries()].sort((a, b) => a[1].count - b[1].count);
    for (const [key, group] of rare.slice(0, Math.ceil(rare.length / 2))) {
      this.groups.delete(key);
      this.droppedErrors += group.count;
    }
  }
}

/**
 * A message with what varies from one input to the next taken out: UUIDs and other long ids become
 * `<id>`, numbers `<n>`.
 */
function normaliseMessage(message: string): string {
  return message
    .replace(UUID, '<id>')
    .replace(LONG_TOKEN, (token) => (/\d/.test(token) ? '<id>' : token))
    .replace(NUMBER, '<n>');
}

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
// A run of 12+ letters, digits, `_` or `-` with a digit in it: an id (ULID, nanoid, hash, key).
const LONG_TOKEN = /\b[0-9A-Za-z_-]{12,}\b/g;
const NUMBER = /\d+(?:\.\d+)?/g;

/**
 * Where a template's values go in a shell script: straight to where they stand, and through the
 * variables they are assigned to (`n={input:x}; (( n > 5 ))`), read into (`read n <<< …`),
 * passed through (`f {input:x}` makes `$1`), in any order and across nested scripts. What
 * reaches a place that asks for a shape (`ShellNeed`) gives that need to every value that can
 * flow there. Flow-insensitive on purpose: a use before the assignment counts too, so that no
 * order of statements can slip a value past the check.
 */
import { distinctNeeds, type ShellNeed } from './value-shape.js';

/**
 * What a piece of text may carry: template slots (`#3`), variables (`name`), the positional
 * parameters (`@`).
 */
export type Taint = ReadonlySet<string>;

/** Carries nothing. */
export const CLEAN: Taint = new Set();

/** The source name of template slot `index`. */
export function slotSource(index: number): string {
  return `#${index}`;
}

/**
 * Files and file descriptors are variables of the flow too: what a command writes to `out.txt`
 * flows into `>file:out.txt`, and a shell that runs `out.txt` reads it, so a value written to a
 * file and run from it later is found like one assigned to a variable and used later.
 */
/** The stream of file descriptor `fd` (`>fd:3`); `>fd:?` for one bash picks (`{name}>`). */
export function streamKey(fd: string): string {
  return /^\d+$/.test(fd) ? `>fd:${fd}` : UNKNOWN_STREAM;
}

/** A file the script writes (`>file:out.txt`); `>file:?` for a path not known. */
export function fileKey(path: string | undefined): string {
  if (path === undefined) return UNKNOWN_FILE;
  return `>file:${path.replace(/\/{2,}/g, '/').replace(/^(\.\/)+/, '')}`;
}

/** Every file the script writes, together. */
export const ANY_FILE = '>file:*';
/** Every descriptor the script writes to, together. */
export const ANY_STREAM = '>fd:*';
const UNKNOWN_FILE = '>file:?';
const UNKNOWN_STREAM = '>fd:?';

/** What reading the file at `path` (undefined: a path not known) may give. */
export function fileTaint(path: string | undefined): Taint {
  return path === undefined ? new Set([ANY_FILE]) : new Set([fileKey(path), UNKNOWN_FILE]);
}

/** What reading descriptor `fd` (undefined: one not known) may give. */
export function streamTaint(fd: string | undefined): Taint {
  return fd === undefined || !/^\d+$/.test(fd)
    ? new Set([ANY_STREAM])
    : new Set([streamKey(fd), UNKNOWN_STREAM]);
}

/** Everything any of `taints` carries. */
export function union(...taints: Taint[]): Taint {
  const nonEmpty = taints.filter((t) => t.size > 0);
  if (nonEmpty.length === 0) return CLEAN;
  if (nonEmpty.length === 1) return nonEmpty[0]!;
  const out = new Set<string>();
  for (const t of nonEmpty) for (const s of t) out.add(s);
  return out;
}

/** The needs of one shell template's values, gathered as the analysis finds them. */
export class ValueFlow {
  private readonly needs = new Map<string, ShellNeed[]>();
  private readonly flows = new Map<string, Set<string>>();

  /** Whatever `taint` carries must meet `need`. */
  need(taint: Taint, need: ShellNeed): void {
    for (const source of taint) {
      const list = this.needs.get(source);
      if (list === undefined) this.needs.set(source, [need]);
      else list.push(need);
    }
  }

  /** Whatever `taint` carries flows into variable `name`. */
  flow(taint: Taint, name: string): void {
    if (taint.size === 0) return;
    let sources = this.flows.get(name);
    if (sources === undefined) this.flows.set(name, (sources = new Set()));
    for (const s of taint) if (s !== name) sources.add(s);
  }

  /** The needs of slots `0…count-1`: their own, and those of every variable they reach. */
  slotNeeds(count: number): ShellNeed[][] {
    const out: ShellNeed[][] = Array.from({ length: count }, () => []);
    for (const [source, needs] of this.needs) {
      for (const slot of this.slotsReaching(source)) out[slot]?.push(...needs);
    }
    return out.map(distinctNeeds);
  }

  /** The slots whose values can reach `source` (itself, for a slot). */
  private slotsReaching(source: string): number[] {
    const slots: number[] = [];
    const seen = new Set<string>();
    const stack = [source];
    while (stack.length > 0) {
      const s = stack.pop()!;
      if (seen.has(s)) continue;
      seen.add(s);
      if (s.startsWith('#')) slots.push(Number(s.slice(1)));
      else for (const from of this.flows.get(s) ?? []) stack.push(from);
    }
    return slots;
  }
}

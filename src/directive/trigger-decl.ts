/** What starts a directive besides a caller: its schedules and events (part of the AST, see `ast.ts`). */
import type { SourceLocation } from '../errors/source-location.js';

/** `<schedule>`: a run per tick of `cron` in `timezone`, with these inputs. */
export interface ScheduleDecl {
  /** Names the schedule within its directive (default: its position, `1`, `2`, …). */
  name: string;
  cron: string;
  /** An IANA time zone (`Europe/Berlin`); default UTC. */
  timezone: string | undefined;
  /** Input values as written (text), coerced to the inputs' types when a run starts. */
  inputs: Record<string, string>;
  loc: SourceLocation;
}

/** `<on event="order.created"/>`: a run per event of that name, its payload as input `event`. */
export interface EventDecl {
  event: string;
  loc: SourceLocation;
}

import { cronProblem } from '../directive/read-triggers.js';
import type { DirectiveLoader, LoadedDirective } from '../engine/directive-loader.js';
import { validateInputs } from '../engine/validate-inputs.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { InputLimits } from '../policy/project-policy.js';
import type { DirectiveInfo } from './directive-catalog.js';
import { fingerprintOf } from './idempotency.js';
import { DECLARED, type Schedule } from './schedule.js';

/** What {@link Dirigent.addSchedule} takes. */
export interface ScheduleRequest {
  directive: string;
  cron: string;
  timezone?: string;
  inputs?: Record<string, unknown>;
  id?: string;
}

/**
 * The schedule `request` asks for on the directive `loaded`: its inputs validated (defaults
 * filled), its cron expression and time zone checked as `<schedule>`'s are, and its id (default:
 * derived from the directive, the schedule and the inputs) checked. `INVALID_INPUTS` or
 * `INVALID_REQUEST` otherwise.
 */
export function scheduleOf(
  loaded: LoadedDirective,
  request: ScheduleRequest,
  limits: InputLimits,
): Omit<Schedule, 'next'> {
  const inputs = validateInputs(loaded.compiled.directive, request.inputs ?? {}, limits);
  const problem = cronProblem(request.cron, request.timezone);
  if (problem !== undefined)
    throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, problem.message, { hint: problem.hint });
  const id =
    request.id ??
    `${loaded.itemId}:${fingerprintOf(`${request.cron} ${request.timezone ?? ''}`, inputs).slice(0, 12)}`;
  if (id.startsWith(DECLARED) || !/^[!-~]{1,200}$/.test(id))
    throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `"${id}" cannot be a schedule's id.`, {
      hint: `Ids are printable without spaces, up to 200 characters, and do not start with "${DECLARED}" (kept for schedules declared in directives).`,
    });
  return {
    id,
    directive: loaded.itemId,
    cron: request.cron,
    ...(request.timezone !== undefined && { timezone: request.timezone }),
    inputs,
  };
}

/** What the declared schedules are read from: the project's directives (a `Dirigent`). */
export interface ScheduleSource {
  readonly loader: Pick<DirectiveLoader, 'policy'>;
  directives(): Promise<DirectiveInfo[]>;
  load(directive: string): Promise<LoadedDirective>;
}

/**
 * The schedules the project's valid directives declare (`<schedule>`), as ids
 * `directive:<item id>#<name>`, their inputs validated (defaults filled).
 */
export async function declaredSchedules(source: ScheduleSource): Promise<Omit<Schedule, 'next'>[]> {
  const declared = [];
  for (const d of await source.directives()) {
    if (!d.valid) continue;
    const loaded = await source.load(d.directive);
    for (const s of d.schedules)
      declared.push({
        id: `${DECLARED}${d.directive}#${s.name}`,
        directive: d.directive,
        cron: s.cron,
        ...(s.timezone !== undefined && { timezone: s.timezone }),
        inputs: validateInputs(loaded.compiled.directive, s.inputs, source.loader.policy.limits),
      });
  }
  return declared;
}

/**
 * The shape of a group of starts, checked before any run of it starts: the client makes these
 * (`start-sender.ts`), but a job in the runs queue may come from anywhere, and a malformed one must
 * fail whole with what is wrong, not half-start with a `TypeError`.
 */
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { checkRunId } from '../../operations/check-run-id.js';
import type { StartsJobData } from '../run-job.js';

/** Throws `INVALID_REQUEST`, naming the job and the run, unless `group` is a well-formed group. */
export function checkStartsJob(group: StartsJobData, jobId: string | undefined): void {
  const wrong = (what: string) =>
    DirigentError.fatal(ErrorCode.INVALID_REQUEST, `Group of starts ${jobId}: ${what}.`, {
      hint: 'Groups of starts are made by RunsClient.start; another BullMQ client starts a run with a `start` job (see src/redis/run-job.ts).',
    });
  const { sources, runs } = group as { sources: unknown; runs: unknown };
  if (!Array.isArray(sources) || !Array.isArray(runs) || runs.length === 0)
    throw wrong('it needs `sources` and `runs`, a non-empty list');
  for (const [i, s] of sources.entries()) {
    const source = s as Record<string, unknown> | null;
    if (
      typeof source?.directive !== 'string' ||
      typeof source.text !== 'string' ||
      typeof source.hash !== 'string' ||
      typeof source.ext !== 'string'
    )
      throw wrong(`source ${i} needs \`directive\`, \`text\`, \`hash\` and \`ext\`, as strings`);
  }
  for (const [i, r] of runs.entries()) {
    const run = r as Record<string, unknown> | null;
    if (typeof run?.runId !== 'string') throw wrong(`run ${i} has no \`runId\``);
    try {
      checkRunId(run.runId);
    } catch (err) {
      throw wrong(`run ${i}: ${DirigentError.from(err).message}`);
    }
    if (!Number.isInteger(run.source) || sources[run.source as number] === undefined)
      throw wrong(`run ${i} (${run.runId}) names no source of the group`);
    const inputs = run.inputs;
    if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs))
      throw wrong(`run ${i} (${run.runId}) needs \`inputs\`, an object`);
  }
}

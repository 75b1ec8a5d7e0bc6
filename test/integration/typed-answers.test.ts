/**
 * Typed answers, embedded and on Redis (workers in this process): a signal whose payload does not
 * match the `<answer>`s of the waiting step is refused with `INVALID_PAYLOAD` listing every
 * problem, the run still waits with its record unchanged, and a matching payload then resumes it,
 * the step's result typed. On Redis the operation refuses before any signal job is sent, and a
 * worker that gets a job with a bad payload all the same refuses it too.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/engine/run-record.js';
import { DirigentError } from '../../src/errors/dirigent-error.js';
import { Dirigent } from '../../src/operations/dirigent.js';
import { RunsClient } from '../../src/redis/client/runs-client.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentModes, MODES } from '../support/dirigent-modes.js';
import { inProcessWorker } from '../support/in-process-worker.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();

/**
 * `review`: an instruction answered with `approved` (boolean, required) and `note` (string), then
 * a branch on the typed answer. `outer`: a child run of `review`, answered through its parent.
 */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-answers-'));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'review',
    `<process>
    <step name="review">
      <instruction>Review the notes.
        <answer name="approved" type="boolean" required="true">Whether it may ship</answer>
        <answer name="note" type="string"/>
      </instruction>
      <next><when path="result.approved" op="eq" value="true" to="ship"/><otherwise to="$end"/></next>
    </step>
    <step name="ship"><render>shipped: \${steps.review.result.note}</render></step>
  </process>
  <outputs>
    <output name="approved" value="\${steps.review.result.approved}"/>
    <output name="said" value="\${steps.ship.result?}"/>
  </outputs>`,
  );
  writeDirective(
    directives,
    'outer',
    `<process><step name="inner"><execute item_type="directive" item_id="review"/></step></process>
  <outputs><output name="inner" value="\${steps.inner.result}"/></outputs>`,
  );
  return dir;
}

const BAD = { approved: 'yes', notes: 'Friday' };
const PROBLEMS = [
  'unknown field "notes" (did you mean "note"? declared: approved, note)',
  'field "approved" must be a boolean, got "yes"',
];

const modes = dirigentModes(redis);

/** The error `work` rejects with. */
async function refusal(work: Promise<unknown>): Promise<DirigentError> {
  return work.then(
    () => expect.fail('the signal was not refused'),
    (err: unknown) => {
      expect(err).toBeInstanceOf(DirigentError);
      return err as DirigentError;
    },
  );
}

for (const mode of MODES) {
  describe(`typed answers (${mode})`, { timeout: 30_000 }, () => {
    async function open(): Promise<{ dirigent: Dirigent; dir: string }> {
      const dir = project();
      const dirigent = await modes.open(mode, dir);
      return { dirigent, dir };
    }

    it('refuses a payload that does not match, listing every problem, and the run waits on unchanged; a matching one resumes it', async () => {
      const { dirigent } = await open();
      const { runId } = await dirigent.start({ directive: 'review' });
      const waiting = await dirigent.wait(runId);
      expect(waiting.status).toBe('waiting');
      expect(waiting.waiting).toEqual([
        {
          step: 'review',
          signal: 'review',
          text: 'Review the notes.',
          answer: {
            kind: 'fields',
            fields: [
              {
                name: 'approved',
                type: 'boolean',
                required: true,
                description: 'Whether it may ship',
              },
              { name: 'note', type: 'string', required: false },
            ],
          },
        },
      ]);

      const err = await refusal(dirigent.signal(runId, 'review', BAD));
      expect(err.code).toBe('INVALID_PAYLOAD');
      expect(err.details).toEqual({ runId, step: 'review', signal: 'review', problems: PROBLEMS });
      for (const p of PROBLEMS) expect(err.message).toContain(p);
      expect(err.hint).toContain('{"approved":true,"note":"…"}');
      expect(await dirigent.get(runId), 'the refused signal changed nothing').toEqual(waiting);

      const done = await dirigent.signal(runId, 'review', { approved: true, note: 'Friday' });
      expect(done.status).toBe('completed');
      expect(done.outputs).toEqual({ approved: true, said: 'shipped: Friday' });
    });

    it("checks an answer given through the parent against the child's declaration", async () => {
      const { dirigent } = await open();
      const { runId } = await dirigent.start({ directive: 'outer' });
      const waiting = await dirigent.wait(runId);
      const childId = waiting.waiting?.[0]?.runId;
      expect(childId).toBeDefined();
      const err = await refusal(dirigent.signal(runId, 'review', { note: 3 }));
      expect(err.code).toBe('INVALID_PAYLOAD');
      expect(err.details).toMatchObject({
        runId: childId,
        problems: ['missing required field "approved"', 'field "note" must be a string, got 3'],
      });
      expect(await dirigent.get(runId)).toEqual(waiting);
      const done = await dirigent.signal(runId, 'review', { approved: false });
      expect(done.status).toBe('completed');
      expect(done.outputs).toEqual({ inner: { approved: false } });
    });

    if (mode === 'redis')
      it('the operation refuses before any signal job is sent: no worker needs to be there', async () => {
        const dir = project();
        modes.after(() => rmSync(dir, { recursive: true, force: true }));
        const worker = inProcessWorker(redis, { projectDir: dir });
        modes.after(() => worker.close());
        const dirigent = await Dirigent.open({
          project: dir,
          redis: redis.url,
          prefix: redis.prefix,
        });
        modes.after(() => dirigent.close());
        const { runId } = await dirigent.start({ directive: 'review' });
        const waiting = await dirigent.wait(runId);
        await worker.close();
        const err = await refusal(dirigent.signal(runId, 'review', BAD));
        expect(err.details).toMatchObject({ problems: PROBLEMS });
        expect(await dirigent.get(runId)).toEqual(waiting);
      });

    if (mode === 'redis')
      it('a worker refuses a signal job whose payload does not match, though no operation checked it', async () => {
        const { dirigent } = await open();
        const { runId } = await dirigent.start({ directive: 'review' });
        const waiting: RunRecord = await dirigent.wait(runId);
        // Straight to the queue, past the operation's own check.
        const client = new RunsClient(redis.connect(), redis.prefix);
        modes.after(() => client.close());
        const err = await refusal(client.signal(runId, 'review', BAD));
        expect(err.code).toBe('INVALID_PAYLOAD');
        expect(err.details).toMatchObject({ runId, problems: PROBLEMS });
        expect(await dirigent.get(runId)).toEqual(waiting);
        const done = await client.signal(runId, 'review', { approved: true, note: 'now' });
        expect(done.status).toBe('completed');
      });
  });
}

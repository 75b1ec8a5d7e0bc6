import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirectiveLoader } from '../../../src/engine/directive-loader.js';
import { Engine } from '../../../src/engine/engine.js';
import { FileRunStore } from '../../../src/engine/file-run-store.js';
import { BuiltinDispatcher } from '../../../src/tools/builtin-dispatcher.js';
import { writeDirective } from '../../support/directive-file.js';
import { waitFor } from '../../support/wait-for.js';

let project: string;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-engine-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

/** A fresh engine over the same project folder, as a second process would have. */
const engineFor = () =>
  new Engine({
    projectDir: project,
    dispatcher: new BuiltinDispatcher(),
    loader: new DirectiveLoader(project),
    store: new FileRunStore(project),
  });

function write(name: string, xml: string): string {
  return writeDirective(project, name, xml);
}

const waiter = `<process>
  <step name="ask"><instruction>Ship it?</instruction></step>
  <step name="done"><render>answer: \${steps.ask.result}</render></step>
</process><outputs><output name="text" value="\${steps.done.result}"/></outputs>`;

describe('Engine: waiting runs, signals and cancellation', () => {
  it('keeps a waiting run in the store and resumes it in another engine', async () => {
    const file = write('waiter', waiter);
    const first = engineFor();
    const record = await first.run(await first.loader.loadFile(file), {});
    expect(record.status).toBe('waiting');
    expect(record.waiting).toEqual([{ step: 'ask', signal: 'ask', text: 'Ship it?' }]);
    first.release();
    const second = engineFor();
    const done = await second.signal(record.runId, 'ask', 'yes');
    expect(done.status).toBe('completed');
    expect(done.outputs).toEqual({ text: 'answer: yes' });
  });

  it('refuses a signal nothing waits for and says what the run waits for', async () => {
    const engine = engineFor();
    const record = await engine.run(await engine.loader.loadFile(write('waiter', waiter)), {});
    await expect(engine.signal(record.runId, 'nope', null)).rejects.toMatchObject({
      code: 'UNKNOWN_SIGNAL',
      hint: 'It waits for: ask.',
    });
    engine.release();
  });

  it('refuses unknown runs and runs that are not waiting', async () => {
    const engine = engineFor();
    await expect(engine.signal('no-such-run', 'x', null)).rejects.toMatchObject({
      code: 'RUN_NOT_FOUND',
    });
    const done = await engine.run(
      await engine.loader.loadFile(
        write('quick', '<process><step name="a"><render>x</render></step></process>'),
      ),
      {},
    );
    expect(done.status).toBe('completed');
    await expect(engineFor().signal(done.runId, 'a', null)).rejects.toMatchObject({
      code: 'RUN_NOT_WAITING',
    });
  });

  it('cancels a waiting run from another engine', async () => {
    const file = write('waiter', waiter);
    const first = engineFor();
    const record = await first.run(await first.loader.loadFile(file), {});
    first.release();
    const cancelled = await engineFor().cancelRun(record.runId, 'no longer needed');
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.error).toEqual({ code: 'CANCELLED', message: 'no longer needed', step: null });
    expect(cancelled.steps).toEqual([
      expect.objectContaining({ name: 'ask', status: 'cancelled' }),
    ]);
  });

  it('fails a wait whose deadline passed while the run was stored', async () => {
    const file = write(
      'timed',
      '<process><step name="hold" on_error="late"><wait signal="go" timeout_seconds="0.5"/></step><step name="late"><render>${error.code}</render></step></process>',
    );
    const first = engineFor();
    const run = first.start(await first.loader.loadFile(file), {});
    const record = await run.settled();
    expect(record.status).toBe('waiting');
    first.release();
    // Nothing holds the run now: its deadline passes while it is only stored.
    const deadline = record.waiting![0]!.deadline!;
    await waitFor(() => Date.now() > deadline, { what: "the wait's deadline to pass" });
    const second = engineFor();
    await expect(second.signal(record.runId, 'go', null)).rejects.toMatchObject({
      code: 'RUN_NOT_WAITING',
    });
    const stored = await second.store.load(record.runId);
    expect(stored?.record).toMatchObject({ status: 'completed' });
    expect(stored?.record.steps.map((s) => `${s.name}:${s.status}`)).toEqual([
      'hold:failed',
      'late:completed',
    ]);
  });

  it('delivers a signal to the child directive that waits for it', async () => {
    write(
      'kid',
      '<process><step name="confirm"><wait signal="confirm"/></step></process><outputs><output name="said" value="${steps.confirm.result}"/></outputs>',
    );
    const parent = write(
      'parent',
      '<process><step name="call"><execute item_type="directive" item_id="kid"/></step></process><outputs><output name="kid" value="${steps.call.result.said}"/></outputs>',
    );
    const engine = engineFor();
    const run = engine.start(await engine.loader.loadFile(parent), {});
    // The parent settles waiting once its child waits.
    expect((await run.settled()).status).toBe('waiting');
    const record = await engine.signal(run.runId, 'confirm', 'ok');
    expect(record).toMatchObject({ status: 'completed', outputs: { kid: 'ok' } });
  });

  it('reports a run as waiting while its child directive waits, and resumes the tree in another engine', async () => {
    write(
      'kid',
      '<process><step name="confirm"><wait signal="confirm"/></step></process><outputs><output name="said" value="${steps.confirm.result}"/></outputs>',
    );
    const parent = write(
      'parent',
      '<process><step name="call"><execute item_type="directive" item_id="kid"/></step><step name="after"><render>${steps.call.result.said}!</render></step></process><outputs><output name="text" value="${steps.after.result}"/></outputs>',
    );
    const first = engineFor();
    const record = await first.run(await first.loader.loadFile(parent), {});
    expect(record.status).toBe('waiting');
    expect(record.waiting).toEqual([
      { step: 'confirm', signal: 'confirm', runId: expect.any(String) },
    ]);
    first.release();
    const done = await engineFor().signal(record.runId, 'confirm', 'yes');
    expect(done).toMatchObject({ status: 'completed', outputs: { text: 'yes!' } });
    expect(done.steps.map((s) => `${s.name}:${s.status}`)).toEqual([
      'call:completed',
      'after:completed',
    ]);
  });

  it('rejects invalid inputs before anything runs, reporting each problem once at its <input>', async () => {
    const engine = engineFor();
    const loaded = await engine.loader.loadFile(
      write(
        'typed',
        '<inputs><input name="count" type="integer" required="true"/></inputs><process><step name="a"><render>x</render></step></process>',
      ),
    );
    const err = await engine.run(loaded, { count: 'abc', extra: 1 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_INPUTS', location: { line: 4 } });
    expect((err as { details: { problems: string[] } }).details.problems).toEqual([
      'input "count" must be an integer, got "abc"',
      'unknown input "extra" (declared: count)',
    ]);
  });

  it('keeps the location of a failure about the directive in the run record', async () => {
    const engine = engineFor();
    const loaded = await engine.loader.loadFile(
      write(
        'each',
        '<process><step name="each"><foreach expr="{}" as="x"><execute item_type="tool" item_id="dirigent/util/echo"/></foreach></step></process>',
      ),
    );
    const record = await engine.run(loaded, {});
    expect(record.error).toMatchObject({
      code: 'FOREACH_NOT_ARRAY',
      step: 'each',
      location: { line: 4 },
    });
    expect(record.steps[0]?.error?.location?.line).toBe(4);
  });
});

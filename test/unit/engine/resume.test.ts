/**
 * A durable engine stores the run after every transition, so that when the process driving it
 * dies between steps or in the middle of one, another engine resumes it from the store: steps
 * that ended are not run again, the interrupted one is.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirectiveLoader } from '../../../src/engine/directive-loader.js';
import { Engine } from '../../../src/engine/engine.js';
import { FileRunStore } from '../../../src/engine/file-run-store.js';
import { BuiltinDispatcher } from '../../../src/tools/builtin-dispatcher.js';
import type { ToolCall } from '../../../src/tools/tool-call.js';
import type { ToolDispatcher } from '../../../src/tools/tool-dispatcher.js';
import { DirigentError } from '../../../src/errors/dirigent-error.js';
import { writeDirective } from '../../support/directive-file.js';
import { waitFor } from '../../support/wait-for.js';

let project: string;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-resume-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

/** Runs the built-ins, counting calls per step; calls of `hangOn` never return (a dead process). */
class Recorder implements ToolDispatcher {
  readonly calls: string[] = [];
  private readonly builtins = new BuiltinDispatcher();
  constructor(private readonly hangOn?: string) {}
  describe(itemId: string) {
    return this.builtins.describe(itemId);
  }
  dispatch(call: ToolCall): Promise<unknown> {
    this.calls.push(call.step);
    if (call.step === this.hangOn) return new Promise(() => undefined);
    return this.builtins.dispatch(call);
  }
}

const engineWith = (dispatcher: ToolDispatcher) =>
  new Engine({
    projectDir: project,
    dispatcher,
    loader: new DirectiveLoader(project),
    store: new FileRunStore(project),
    durable: true,
  });

const echo = (name: string, value: string) =>
  `<step name="${name}"><execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="${value}"/></execute></step>`;

describe('Engine.resume', () => {
  it('resumes a run whose process died in the middle of a step, without repeating ended steps', async () => {
    const file = writeDirective(
      project,
      'three',
      `<process>${echo('a', 'one')}${echo('b', '${steps.a.result.v}-two')}${echo('c', '${steps.b.result.v}-three')}</process><outputs><output name="v" value="\${steps.c.result.v}"/></outputs>`,
    );
    const dead = new Recorder('b');
    const first = engineWith(dead);
    const run = first.start(await first.loader.loadFile(file), {});
    // a has ended, b hangs: once that is stored, the process "dies".
    await waitFor(() => dead.calls.includes('b'), { what: "step b's call" });
    await run.persisted();
    expect(dead.calls).toEqual(['a', 'b']);
    first.release();

    const alive = new Recorder();
    const second = engineWith(alive);
    const resumed = await second.resume(run.runId);
    const record = await resumed.settled();
    expect(record.status).toBe('completed');
    expect(record.outputs).toEqual({ v: 'one-two-three' });
    expect(alive.calls).toEqual(['b', 'c']);
    expect(record.steps.map((s) => s.name)).toEqual(['a', 'b', 'c']);
  });

  it('stores a run from its first state, so one whose process dies in its first step resumes', async () => {
    const file = writeDirective(project, 'first', `<process>${echo('a', 'one')}</process>`);
    const first = engineWith(new Recorder('a'));
    const run = first.start(await first.loader.loadFile(file), {});
    await run.persisted();
    first.release();
    const stored = await new FileRunStore(project).load(run.runId);
    expect(stored?.record.status).toBe('running');
    expect(stored?.steps.a?.status).toBe('running');
    const record = await (await engineWith(new Recorder()).resume(run.runId)).settled();
    expect(record).toMatchObject({
      status: 'completed',
      steps: [{ name: 'a', status: 'completed' }],
    });
  });

  it('stores nothing more for a run it let go, even when a late outcome of its call fails', async () => {
    const file = writeDirective(
      project,
      'late',
      `<process><step name="try"><retry attempts="3" backoff="fixed" delay_ms="10"/><execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="x"/></execute></step></process>`,
    );
    // The call fails after the run was let go (another process may drive it by then).
    let fail: ((err: Error) => void) | undefined;
    const first = engineWith({
      describe: () => undefined,
      dispatch: () => new Promise((_, reject) => (fail = reject)),
    });
    const run = first.start(await first.loader.loadFile(file), {});
    await waitFor(() => fail, { what: "the step's call" });
    await run.persisted();
    first.release();
    const before = await new FileRunStore(project).load(run.runId);
    fail!(DirigentError.retryable('TOOL_FAILED', 'late'));
    // Whatever the late failure sets off starts within this turn of the event loop (a retry, a
    // write): past it, and past every write under way, the store is as the run was let go.
    await new Promise((r) => setImmediate(r));
    await run.persisted();
    expect(await new FileRunStore(project).load(run.runId)).toEqual(before);
    expect(before?.steps.try).toMatchObject({ status: 'running', attempts: 1 });
  });

  it('counts a call that ran in the process that died as lost with its worker (WORKER_LOST), and tries the step again', async () => {
    const file = writeDirective(
      project,
      'in-process',
      `<process>${echo('a', 'one')}${echo('b', '${steps.a.result.v}-two')}</process><outputs><output name="v" value="\${steps.b.result.v}"/></outputs>`,
    );
    // b's call is taken in by the dispatcher (as a worker's own tool worker does), then hangs.
    let taken = false;
    const first = engineWith({
      describe: (id) => new BuiltinDispatcher().describe(id),
      dispatch: (call) => {
        if (call.step !== 'b') return new BuiltinDispatcher().dispatch(call);
        call.inProcess?.('worker-1');
        taken = true;
        return new Promise(() => undefined);
      },
    });
    const run = first.start(await first.loader.loadFile(file), {});
    await waitFor(() => taken, { what: "step b's call, taken in" });
    await run.persisted();
    first.release();
    const stored = await new FileRunStore(project).load(run.runId);
    expect(stored?.steps.a).toMatchObject({ status: 'completed' });
    expect(stored?.steps.b).toMatchObject({ status: 'running', attempts: 1, runsOn: 'worker-1' });

    const calls: ToolCall[] = [];
    const second = engineWith({
      describe: (id) => new BuiltinDispatcher().describe(id),
      dispatch: (call) => {
        calls.push(call);
        return new BuiltinDispatcher().dispatch(call);
      },
    });
    const record = await (await second.resume(run.runId)).settled();
    expect(record.status).toBe('completed');
    expect(record.outputs).toEqual({ v: 'one-two' });
    // The lost call was attempt 1; the step went on with attempt 2, made like any repeated call.
    expect(calls.map((c) => [c.step, c.attempt, c.repeated])).toEqual([['b', 2, true]]);
    expect(record.steps).toMatchObject([
      { name: 'a', attempts: 1 },
      { name: 'b', status: 'completed', attempts: 2 },
    ]);
  });

  it('fails a step whose only attempt ran in the process that died, with WORKER_LOST', async () => {
    const file = writeDirective(
      project,
      'once',
      `<process><step name="b"><retry attempts="1"/><execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="x"/></execute></step></process>`,
    );
    let taken = false;
    const first = engineWith({
      describe: () => undefined,
      dispatch: (call) => {
        call.inProcess?.('worker-1');
        taken = true;
        return new Promise(() => undefined);
      },
    });
    const run = first.start(await first.loader.loadFile(file), {});
    await waitFor(() => taken, { what: "step b's call, taken in" });
    await run.persisted();
    first.release();
    const record = await (await engineWith(new Recorder()).resume(run.runId)).settled();
    expect(record).toMatchObject({ status: 'failed', error: { code: 'WORKER_LOST', step: 'b' } });
    expect(record.error!.message).toContain('(worker-1)');
  });

  it('refuses to resume a run that has ended', async () => {
    const file = writeDirective(project, 'one', `<process>${echo('a', 'x')}</process>`);
    const engine = engineWith(new Recorder());
    const record = await engine.run(await engine.loader.loadFile(file), {});
    await expect(engineWith(new Recorder()).resume(record.runId)).rejects.toMatchObject({
      code: 'RUN_NOT_WAITING',
    });
  });

  /** A parent whose child's only step hangs (the process "dies" there, once that is stored). */
  async function parentStoppedInChild(): Promise<{ parentId: string; childId: string }> {
    writeDirective(
      project,
      'child',
      `<process>${echo('inner', 'deep')}</process><outputs><output name="v" value="\${steps.inner.result.v}"/></outputs>`,
    );
    const file = writeDirective(
      project,
      'parent',
      `<metadata><limits spawns="1"/></metadata><process><step name="call"><execute item_type="directive" item_id="child"/></step></process><outputs><output name="v" value="\${steps.call.result.v}"/></outputs>`,
    );
    const inner = new Recorder('inner');
    const first = engineWith(inner);
    const parent = first.start(await first.loader.loadFile(file), {});
    await waitFor(() => inner.calls.includes('inner'), { what: "the child's step" });
    const child = first.activeRun(parent.children.call!)!;
    await Promise.all([parent.persisted(), child.persisted()]);
    first.release();
    const stored = await new FileRunStore(project).load(parent.runId);
    expect(stored!.children.call).toBe(child.runId);
    return { parentId: parent.runId, childId: child.runId };
  }

  it('resumes a parent whose child directive went on (or ended) while the parent was down', async () => {
    const { parentId, childId } = await parentStoppedInChild();
    // The child ended meanwhile (another process finished it): its outcome settles the parent.
    const store = new FileRunStore(project);
    const child = await store.load(childId);
    child!.record.status = 'completed';
    child!.record.outputs = { v: 'from the child' };
    await store.save(child!);
    const second = engineWith(new Recorder());
    const record = await (await second.resume(parentId)).settled();
    expect(record).toMatchObject({ status: 'completed', outputs: { v: 'from the child' } });
  });

  it('starts a child again, under the same id, when its parent stopped before the child was first stored', async () => {
    const { parentId, childId } = await parentStoppedInChild();
    rmSync(join(project, '.dirigent', 'runs', `${childId}.json`)); // never written
    const again = new Recorder();
    const second = engineWith(again);
    const record = await (await second.resume(parentId)).settled();
    expect(record).toMatchObject({ status: 'completed', outputs: { v: 'deep' } });
    expect(again.calls).toEqual(['inner']);
    const store = new FileRunStore(project);
    const parent = await store.load(parentId);
    expect(parent?.children.call).toBe(childId);
    expect(parent?.counters.spawns).toBe(1); // within <limits spawns="1">: counted once
    expect((await store.load(childId))?.record.status).toBe('completed');
  });

  it('takes up the child its parent started but had not noted when it stopped, instead of a second one', async () => {
    const { parentId, childId } = await parentStoppedInChild();
    const store = new FileRunStore(project);
    const stored = await store.load(parentId);
    delete stored!.children.call; // the parent's process stopped before it noted the child
    stored!.counters.spawns = 0;
    await store.save(stored!);
    const second = engineWith(new Recorder());
    const record = await (await second.resume(parentId)).settled();
    expect(record).toMatchObject({ status: 'completed', outputs: { v: 'deep' } });
    expect((await store.load(parentId))?.children.call).toBe(childId);
    const runs = await store.list();
    expect(runs.map((r) => r.runId).sort()).toEqual([childId, parentId].sort());
  });

  it('goes on counting the attempts of a step that was retrying when its process died', async () => {
    const file = writeDirective(
      project,
      'flaky',
      `<process><step name="try"><retry attempts="3" backoff="fixed" delay_ms="10"/><execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="x"/></execute></step></process>`,
    );
    const attempts: number[] = [];
    const dying: ToolDispatcher = {
      describe: () => undefined,
      dispatch: (call) => {
        attempts.push(call.attempt);
        if (call.attempt < 3) return Promise.reject(DirigentError.retryable('TOOL_FAILED', 'busy'));
        return new Promise(() => undefined); // the third attempt never ends: the process dies
      },
    };
    const first = engineWith(dying);
    const run = first.start(await first.loader.loadFile(file), {});
    await waitFor(() => attempts.length === 3, { what: 'the third attempt' });
    first.release();
    // What the process stored before it "died": the third attempt under way.
    await run.persisted();
    const alive = new Recorder();
    const record = await (await engineWith(alive).resume(run.runId)).settled();
    expect(record.status).toBe('completed');
    expect(record.steps).toMatchObject([{ name: 'try', status: 'completed', attempts: 3 }]);
  });

  it('waits out only the rest of a retry delay when resumed in the middle of it, then tries the next attempt', async () => {
    const file = writeDirective(
      project,
      'backoff',
      `<process><step name="try"><retry attempts="3" backoff="fixed" delay_ms="800"/><execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="x"/></execute></step></process>`,
    );
    const failing: ToolDispatcher = {
      describe: () => undefined,
      dispatch: () => Promise.reject(DirigentError.retryable('TOOL_FAILED', 'busy')),
    };
    const first = engineWith(failing);
    const run = first.start(await first.loader.loadFile(file), {});
    const retryAt = await waitFor(() => first.activeRun(run.runId)?.steps.try?.retryAt, {
      what: 'attempt 1 to fail, and its retry 800 ms away',
    });
    // Time passing is what this is about: the process "dies" 500 ms into the delay, so that a
    // resume that started the delay over would try again 500 ms late (the bound below is 400).
    await waitFor(() => Date.now() >= retryAt - 300, { what: '500 ms of the retry delay' });
    await run.persisted();
    first.release(); // the process "dies" in the backoff
    const stored = await new FileRunStore(project).load(run.runId);
    expect(stored!.steps.try!.retryAt).toBe(retryAt);
    expect(stored!.steps.try).toMatchObject({ status: 'running', attempts: 1 });
    expect(retryAt).toBeGreaterThan(Date.now());

    const attempts: { attempt: number; at: number }[] = [];
    const alive = new Recorder();
    const recording: ToolDispatcher = {
      describe: (id) => alive.describe(id),
      dispatch: (call) => {
        attempts.push({ attempt: call.attempt, at: Date.now() });
        return alive.dispatch(call);
      },
    };
    const record = await (await engineWith(recording).resume(run.runId)).settled();
    expect(record.steps).toMatchObject([{ name: 'try', status: 'completed', attempts: 2 }]);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.attempt).toBe(2);
    // Not before the stored time, and not a whole new delay after the resume either.
    expect(attempts[0]!.at).toBeGreaterThanOrEqual(retryAt);
    expect(attempts[0]!.at).toBeLessThan(retryAt + 400);
    const ended = await new FileRunStore(project).load(run.runId);
    expect(ended!.steps.try!.retryAt).toBeUndefined();
  });

  it('keeps the deadline of an attempt under way when resumed: the time already spent counts', async () => {
    const file = writeDirective(
      project,
      'slow',
      `<process><step name="wait"><timeout seconds="1"/><execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="x"/></execute></step></process>`,
    );
    const first = engineWith(new Recorder('wait'));
    const startedAt = Date.now();
    const run = first.start(await first.loader.loadFile(file), {});
    const due = await waitFor(() => first.activeRun(run.runId)?.steps.wait?.deadline, {
      what: "the attempt's deadline",
    });
    // Time passing is what this is about: the process "dies" 800 ms into the attempt's second,
    // so that a resumed attempt given a fresh second would fail 800 ms late (the bound is 500).
    await waitFor(() => Date.now() >= due - 200, { what: "800 ms of the attempt's second" });
    await run.persisted();
    first.release();
    const stored = await new FileRunStore(project).load(run.runId);
    const deadline = stored!.steps.wait!.deadline!;
    expect(deadline).toBeGreaterThanOrEqual(startedAt + 1000);
    expect(deadline).toBeLessThan(startedAt + 1300);

    // A call that never answers but stops when aborted, as every runtime's does.
    const stuck: ToolDispatcher = {
      describe: () => undefined,
      dispatch: (call) =>
        new Promise((_, reject) =>
          call.signal.addEventListener('abort', () => reject(call.signal.reason as Error)),
        ),
    };
    const record = await (await engineWith(stuck).resume(run.runId)).settled();
    const failedAt = Date.now();
    expect(record).toMatchObject({
      status: 'failed',
      error: {
        code: 'STEP_TIMEOUT',
        message:
          'Step "wait" ran longer than its timeout of 1s; raise <timeout seconds="…"> if it needs longer.',
      },
    });
    // The resumed attempt had what was left of its second, not a fresh one.
    expect(failedAt).toBeLessThan(deadline + 500);
  });

  it('cancels a run resumed while its step waits to retry, before the next attempt', async () => {
    const file = writeDirective(
      project,
      'parked',
      `<process><step name="try"><retry attempts="3" backoff="fixed" delay_ms="60000"/><execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="x"/></execute></step></process>`,
    );
    const first = engineWith({
      describe: () => undefined,
      dispatch: () => Promise.reject(DirigentError.retryable('TOOL_FAILED', 'busy')),
    });
    const run = first.start(await first.loader.loadFile(file), {});
    await waitFor(() => first.activeRun(run.runId)?.steps.try?.retryAt, {
      what: 'attempt 1 to fail, and its retry a minute away',
    });
    await run.persisted();
    first.release();

    const alive = new Recorder();
    const second = engineWith(alive);
    await second.resume(run.runId); // as a worker does for a run no one drives
    const record = await second.cancelRun(run.runId, 'no longer needed');
    expect(record.status).toBe('cancelled');
    expect(record.steps).toMatchObject([{ name: 'try', status: 'cancelled', attempts: 1 }]);
    expect(alive.calls).toEqual([]);
  });
});

/**
 * A run record's life on its own, with a plain host and hooks: stored before whoever waits hears,
 * checkpoints gathered, nothing more written once the run is let go.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RunContext } from '../../../src/compiler/run-context.js';
import type { LinkedRun } from '../../../src/engine/linked-run.js';
import {
  CHECKPOINT_AFTER_MS,
  RunLifecycle,
  type LifecycleHooks,
} from '../../../src/engine/run-lifecycle.js';
import type { RunRecord, WaitingStep } from '../../../src/engine/run-record.js';

const context: RunContext = { inputs: {}, state: {}, error: null, runError: null, returned: null };

function newRecord(): RunRecord {
  return {
    runId: 'run-1',
    directive: 'greet',
    status: 'running',
    outputs: null,
    steps: [],
    error: null,
    startedAt: Date.now(),
    endedAt: null,
  };
}

/** A lifecycle whose store writes wait until `written()` lets the oldest one finish. */
function lifecycleOf(durable: boolean, waits: WaitingStep[] | undefined = undefined) {
  const record = newRecord();
  const writes: { status: string; done: () => void }[] = [];
  const left: string[] = [];
  const parents = new Map<string, Pick<LinkedRun, 'queueIdleCheck' | 'resumeRunning'>>();
  const hooks: LifecycleHooks = {
    parentRunId: null,
    waitingSteps: () => waits,
    heldSteps: () => [],
    outputs: () => ({ text: 'hello' }),
    store: () => new Promise<void>((done) => writes.push({ status: record.status, done })),
    ended: () => undefined,
  };
  const host = {
    durable,
    observer: undefined,
    activeRun: (id: string) => parents.get(id) as LinkedRun | undefined,
    unregister: (id: string) => void left.push(id),
  };
  const lifecycle = new RunLifecycle(record, host, hooks);
  /** Finishes the oldest write under way; resolves once what waits on it has run. */
  const written = async () => {
    writes.shift()!.done();
    await new Promise((r) => setImmediate(r));
  };
  return { record, lifecycle, writes, left, written };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('RunLifecycle', () => {
  it('tells whoever waits of the end only once it is stored, then leaves the host', async () => {
    const { lifecycle, writes, left, written } = lifecycleOf(false);
    let heard: RunRecord | undefined;
    void lifecycle.settled().then((r) => (heard = r));
    lifecycle.end('completed', context);
    await new Promise((r) => setImmediate(r));
    expect(writes.map((w) => w.status)).toEqual(['completed']);
    expect(heard).toBeUndefined();
    expect(left).toEqual([]);

    await written();
    expect(heard).toMatchObject({ status: 'completed', outputs: { text: 'hello' } });
    expect(left).toEqual(['run-1']);
  });

  it(`gathers the checkpoints of ${CHECKPOINT_AFTER_MS} ms into one write`, async () => {
    const { lifecycle, writes } = lifecycleOf(true);
    lifecycle.checkpointSoon();
    lifecycle.checkpointSoon();
    vi.advanceTimersByTime(CHECKPOINT_AFTER_MS - 1);
    lifecycle.checkpointSoon();
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(0);

    vi.advanceTimersByTime(1);
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(1);
  });

  it('writes what was due when the run is let go, and no checkpoint after', async () => {
    const { lifecycle, writes, written } = lifecycleOf(true);
    lifecycle.checkpointSoon();
    lifecycle.release();
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(1);
    await written();

    lifecycle.checkpoint();
    lifecycle.storePromptly();
    lifecycle.checkpointSoon();
    vi.advanceTimersByTime(CHECKPOINT_AFTER_MS);
    await lifecycle.persisted();
    expect(writes).toHaveLength(0);
  });

  it('becomes waiting when only waits are left, stored before it is told', async () => {
    const wait: WaitingStep = { step: 'ask', signal: 'answer' };
    const { record, lifecycle, writes, written } = lifecycleOf(false, [wait]);
    let heard: RunRecord | undefined;
    void lifecycle.settled().then((r) => (heard = r));
    lifecycle.queueIdleCheck();
    lifecycle.queueIdleCheck(); // one check for both
    await new Promise((r) => setImmediate(r));
    expect(record).toMatchObject({ status: 'waiting', waiting: [wait] });
    expect(writes).toHaveLength(1);
    expect(heard).toBeUndefined();

    await written();
    expect(heard?.status).toBe('waiting');
    lifecycle.resumeRunning();
    expect(record.status).toBe('running');
    expect(record.waiting).toBeUndefined();
  });
});

/**
 * Which runs a distributed worker may let go while their work goes on: those whose steps all wait
 * for a tool call or a retry, and until when.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirectiveLoader } from '../../../src/engine/directive-loader.js';
import { Engine } from '../../../src/engine/engine.js';
import type { ActiveRun } from '../../../src/engine/active-run.js';
import { MemoryRunStore } from '../../../src/engine/memory-run-store.js';
import { parkable } from '../../../src/engine/parkable.js';
import { DirigentError } from '../../../src/errors/dirigent-error.js';
import type { ToolDispatcher } from '../../../src/tools/tool-dispatcher.js';
import { writeDirective } from '../../support/directive-file.js';
import { waitFor } from '../../support/wait-for.js';

let project: string;
let engine: Engine;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-parkable-'));
  // Tool calls never answer (they run elsewhere), except those of step "flaky", which fail.
  const dispatcher: ToolDispatcher = {
    describe: () => undefined,
    dispatch: (call) =>
      call.step === 'flaky'
        ? Promise.reject(DirigentError.retryable('TOOL_FAILED', 'busy'))
        : new Promise(() => undefined),
  };
  engine = new Engine({
    projectDir: project,
    dispatcher,
    loader: new DirectiveLoader(project),
    store: new MemoryRunStore(),
  });
});
afterEach(() => {
  engine.release();
  rmSync(project, { recursive: true, force: true });
});

const tool = (name: string, inner = '') =>
  `<step name="${name}">${inner}<execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="x"/></execute></step>`;

/** Starts directive `name`, resolving with its run once `ready` says it stands where it waits. */
async function started(
  name: string,
  process: string,
  ready: (run: ActiveRun) => unknown,
  extra = '',
  inputs: Record<string, unknown> = {},
): Promise<ActiveRun> {
  const file = writeDirective(project, name, `${extra}<process>${process}</process>`);
  const run = engine.start(await engine.loader.loadFile(file), inputs);
  await waitFor(() => ready(run), { what: `run ${name} to reach what it waits for` });
  return run;
}

/** The run's step `step` has begun its attempt (its call is out). */
const calling = (step: string) => (run: ActiveRun) => run.steps[step]?.status === 'running';

describe('parkable', () => {
  it('takes a run waiting for its tool call, due at the step timeout or the run limit', async () => {
    const plain = await started('plain', tool('call'), calling('call'));
    expect(parkable(plain)).toEqual({ due: undefined, calls: true });
    const timed = await started(
      'timed',
      tool('call', '<timeout seconds="30"/>'),
      (r) => r.steps.call?.deadline,
    );
    expect(parkable(timed)?.due).toBe(timed.steps.call!.deadline);
    const limited = await started(
      'limited',
      tool('call'),
      calling('call'),
      '<metadata><limits duration_seconds="60"/></metadata>',
    );
    expect(parkable(limited)?.due).toBe(limited.record.startedAt + 60_000);
  });

  it('takes a run whose step waits to retry, due when the retry is', async () => {
    const run = await started(
      'flaky',
      tool('flaky', '<retry attempts="3" backoff="fixed" delay_ms="5000"/>'),
      (r) => r.steps.flaky?.retryAt,
    );
    expect(parkable(run)).toEqual({ due: run.steps.flaky!.retryAt, calls: false });
  });

  it('keeps runs whose work is in this process, or that wait for a signal', async () => {
    const foreach = await started(
      'fan',
      `<step name="each"><foreach over="\${inputs.items}" as="n" parallel="2"><execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="x"/></execute></foreach></step>`,
      calling('each'),
      '<inputs><input name="items" type="array"/></inputs>',
      { items: [1, 2] },
    );
    expect(foreach.inflight.size).toBe(1);
    expect(parkable(foreach)).toBeUndefined();
    const waiting = await started(
      'ask',
      '<step name="ask"><wait signal="go"/></step>',
      (r) => r.waiting.size > 0,
    );
    expect(parkable(waiting)).toBeUndefined();
    writeDirective(project, 'child', `<process>${tool('inner')}</process>`);
    const parent = await started(
      'parent',
      '<step name="call"><execute item_type="directive" item_id="child"/></step>',
      (r) => r.children.call,
    );
    expect(parent.inflight.size).toBe(1);
    expect(parkable(parent)).toBeUndefined();
  });
});

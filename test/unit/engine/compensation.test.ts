/**
 * Compensation (sagas) in the embedded engine: what is undone and in which order (loops, parallel
 * branches, a run's time limit, a cancel), what a compensation sees, how it is told (the observer,
 * the spans), and that a run resumed in the middle of its compensations runs only the ones left,
 * under the call ids it made them with.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirectiveLoader } from '../../../src/engine/directive-loader.js';
import type { EngineObserver } from '../../../src/engine/engine-options.js';
import { Engine } from '../../../src/engine/engine.js';
import { FileRunStore } from '../../../src/engine/file-run-store.js';
import type { RunRecord } from '../../../src/engine/run-record.js';
import { BuiltinDispatcher } from '../../../src/tools/builtin-dispatcher.js';
import type { ToolCall } from '../../../src/tools/tool-call.js';
import type { ToolDispatcher } from '../../../src/tools/tool-dispatcher.js';
import { writeDirective } from '../../support/directive-file.js';
import { memoryTelemetry, parentIdOf, rootsOf } from '../../support/telemetry.js';
import { waitFor } from '../../support/wait-for.js';

let project: string;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-compensation-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

/** Runs the built-ins, noting each call; calls of `hangOn` never return (a dead process). */
class Recorder implements ToolDispatcher {
  readonly calls: ToolCall[] = [];
  private readonly builtins = new BuiltinDispatcher();
  constructor(private readonly hangOn?: string) {}
  describe(itemId: string) {
    return this.builtins.describe(itemId);
  }
  dispatch(call: ToolCall): Promise<unknown> {
    this.calls.push(call);
    if (call.step === this.hangOn) return new Promise(() => undefined);
    return this.builtins.dispatch(call);
  }
  get steps(): string[] {
    return this.calls.map((c) => c.step);
  }
}

function engineWith(
  dispatcher: ToolDispatcher = new Recorder(),
  more: { observer?: EngineObserver; durable?: boolean; telemetry?: object } = {},
): Engine {
  return new Engine({
    projectDir: project,
    dispatcher,
    loader: new DirectiveLoader(project),
    store: new FileRunStore(project),
    ...more,
  });
}

async function run(engine: Engine, xml: string, inputs: Record<string, unknown> = {}) {
  const loaded = await engine.loader.loadFile(writeDirective(project, 'saga', xml));
  return engine.start(loaded, inputs);
}

const trace = (r: RunRecord) => r.steps.map((s) => `${s.name}:${s.status}`);

/** A step echoing `v`, undone by an echo of `undo` (a template over the step's result). */
const undoable = (name: string, v: string, undo = 'undo ${result.v}', extra = '') =>
  `<step name="${name}">
    <execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="${v}"/></execute>
    <compensate><execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="${undo}"/></execute>${extra}</compensate>
  </step>`;
const fails = (name: string, attempts = 1) =>
  `<step name="${name}"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="exit 4"/></execute><retry attempts="${attempts}"/></step>`;

describe('compensation', () => {
  it('undoes each pass of a looped step, the last first, each with its own result', async () => {
    const dispatcher = new Recorder();
    const record = await (
      await run(
        engineWith(dispatcher),
        `<process>
          <step name="init"><render>x</render><assign name="i" expr="1"/></step>
          <step name="count"><render>\${state.i}</render><assign name="i" expr="state.i + 1"/></step>
          ${undoable('book', 'seat-${state.i}')}
          <step name="again"><next><when expr="state.i &lt; 3" to="count"/></next><render>-</render></step>
          ${fails('pay')}
        </process>`,
      )
    ).settled();
    expect(record.status).toBe('failed');
    expect(trace(record).filter((s) => /^(book|compensate)/.test(s))).toEqual([
      'book:completed',
      'book:completed',
      'compensate:book:completed',
      'compensate:book:completed',
    ]);
    const undone = dispatcher.calls.filter((c) => c.step === 'compensate:book');
    expect(undone.map((c) => c.params.v)).toEqual(['undo seat-3', 'undo seat-2']);
    // Each pass of the compensation makes calls of its own ids.
    expect(new Set(undone.map((c) => c.callId)).size).toBe(2);
  });

  it('undoes the completed steps of parallel branches in the reverse order they completed', async () => {
    const e = engineWith();
    const record = await (
      await run(
        e,
        `<process>
          <parallel name="both" on_failure="continue">
            <branch name="fast">${undoable('quick', 'q')}</branch>
            <branch name="slow">
              <step name="nap"><execute item_type="tool" item_id="dirigent/util/sleep"><param name="ms" value="50"/></execute></step>
              ${undoable('late', 'l')}
            </branch>
          </parallel>
          ${fails('then')}
        </process>`,
      )
    ).settled();
    expect(record.status).toBe('failed');
    expect(trace(record).filter((s) => s.startsWith('compensate'))).toEqual([
      'compensate:late:completed',
      'compensate:quick:completed',
    ]);
  });

  it("undoes the steps of a run that exceeded its time limit, and keeps RUN_TIMEOUT as the run's error", async () => {
    const e = engineWith();
    const record = await (
      await run(
        e,
        `<metadata><limits duration_seconds="0.2"/></metadata>
        <process>
          ${undoable('reserve', 'r')}
          <step name="slow"><execute item_type="tool" item_id="dirigent/util/sleep"><param name="ms" value="5000"/></execute></step>
        </process>`,
      )
    ).settled();
    expect(record.error).toMatchObject({ code: 'RUN_TIMEOUT' });
    expect(trace(record)).toEqual([
      'reserve:completed',
      'slow:cancelled',
      'compensate:reserve:completed',
    ]);
  });

  it('leaves a cancelled run whose compensation fails for good failed, with CANCELLED as the cause', async () => {
    const e = engineWith();
    const r = await run(
      e,
      `<process>
        ${undoable('reserve', 'r')}
        <step name="hold">
          <execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="h"/></execute>
          <compensate>
            <execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="exit 5"/></execute>
            <retry attempts="2" backoff="fixed" delay_ms="1"/>
          </compensate>
        </step>
        <step name="approve"><wait signal="ok"/></step>
      </process>`,
    );
    expect((await r.settled()).status).toBe('waiting');
    const record = await e.cancelRun(r.runId, 'Changed my mind.');
    expect(record.status).toBe('failed');
    expect(trace(record)).toEqual([
      'reserve:completed',
      'hold:completed',
      'approve:cancelled',
      'compensate:hold:failed',
      'compensate:reserve:completed',
    ]);
    expect(record.error).toMatchObject({
      code: 'COMPENSATION_FAILED',
      step: 'compensate:hold',
      cause: { code: 'CANCELLED', message: 'Changed my mind.', step: null },
      compensations: [{ step: 'compensate:hold', code: 'COMMAND_FAILED' }],
    });
    expect(record.error!.message).toMatch(
      /^The run was cancelled, and compensation "compensate:hold" failed for good \(COMMAND_FAILED: /,
    );
    expect(record.steps.find((s) => s.name === 'compensate:hold')?.attempts).toBe(2);
  });

  it('runs a child directive as a compensation, with the result of the step it undoes as input', async () => {
    writeDirective(
      project,
      'refund',
      `<inputs><input name="charge" type="string"/></inputs><process><step name="give_back"><render>refunded \${inputs.charge}</render></step></process><outputs><output name="said" value="\${steps.give_back.result}"/></outputs>`,
    );
    const e = engineWith();
    const r = await run(
      e,
      `<process>
        <step name="charge">
          <execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="c-9"/></execute>
          <compensate><execute item_type="directive" item_id="refund"><param name="charge" value="\${result.v}"/></execute></compensate>
        </step>
        ${fails('ship')}
      </process>`,
    );
    const record = await r.settled();
    expect(trace(record)).toEqual([
      'charge:completed',
      'ship:failed',
      'compensate:charge:completed',
    ]);
    expect(r.steps['compensate:charge']?.result).toEqual({ said: 'refunded c-9' });
    expect(r.children['compensate:charge']).toBeDefined();
  });

  it('tells each compensation on the feed as a step, and the run ends only after the last one', async () => {
    const told: string[] = [];
    let statusAtCompensation: string | undefined;
    const e = engineWith(new Recorder(), {
      observer: {
        stepStarted: (_id, step, attempt) => told.push(`started ${step} ${attempt}`),
        stepEnded: (_id, entry) => told.push(`ended ${entry.name} ${entry.status}`),
        runEnded: (record) => told.push(`run ${record.status}`),
      },
    });
    const r = await run(e, `<process>${undoable('a', '1')}${fails('b')}</process>`);
    const original = e.dispatcher.dispatch.bind(e.dispatcher);
    e.dispatcher.dispatch = (call) => {
      if (call.step === 'compensate:a') statusAtCompensation = r.record.status;
      return original(call);
    };
    await r.settled();
    expect(statusAtCompensation).toBe('running');
    expect(told).toEqual([
      'started a 1',
      'ended a completed',
      'started b 1',
      'ended b failed',
      'started compensate:a 1',
      'ended compensate:a completed',
      'run failed',
    ]);
  });

  it('ends a run cancelled with compensate: false at once, running no compensation', async () => {
    const dispatcher = new Recorder();
    const e = engineWith(dispatcher);
    const r = await run(
      e,
      `<process>${undoable('a', '1')}<step name="approve"><wait signal="ok"/></step></process>`,
    );
    await r.settled();
    const record = await e.cancelRun(r.runId, undefined, { compensate: false });
    expect(record.status).toBe('cancelled');
    expect(trace(record)).toEqual(['a:completed', 'approve:cancelled']);
    expect(dispatcher.steps).toEqual(['a']);
  });

  it('resumes a run whose process stopped during its compensations: only the ones left run, under the same call ids', async () => {
    const xml = `<process>${undoable('a', '1')}${undoable('b', '2')}${fails('c')}</process>`;
    const dead = new Recorder('compensate:a');
    const first = engineWith(dead, { durable: true });
    const r = await run(first, xml);
    await waitFor(() => dead.steps.includes('compensate:a'), { what: 'the last compensation' });
    await r.persisted();
    first.release();
    const stored = await new FileRunStore(project).load(r.runId);
    expect(stored?.record.status).toBe('running');
    expect(trace(stored!.record)).toEqual([
      'a:completed',
      'b:completed',
      'c:failed',
      'compensate:b:completed',
    ]);
    expect(stored?.steps['compensate:a']).toMatchObject({ status: 'running', attempts: 1 });

    const alive = new Recorder();
    const second = engineWith(alive, { durable: true });
    const record = await (await second.resume(r.runId)).settled();
    expect(alive.steps).toEqual(['compensate:a']);
    expect(alive.calls[0]!.callId).toBe(dead.calls.at(-1)!.callId);
    expect(alive.calls[0]!.repeated).toBe(true);
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: 'COMMAND_FAILED', step: 'c' });
    expect(trace(record)).toEqual([
      'a:completed',
      'b:completed',
      'c:failed',
      'compensate:b:completed',
      'compensate:a:completed',
    ]);
  });
});

describe('the spans of compensations', () => {
  it('are step spans of kind compensate under the run, one per attempt, and the run span ends after them', async () => {
    const telemetry = memoryTelemetry();
    try {
      const e = engineWith(new BuiltinDispatcher(), { telemetry: telemetry.options });
      const record = await (
        await run(
          e,
          `<process>
            ${undoable('a', '1', 'x', '')}
            <step name="b">
              <execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="2"/></execute>
              <compensate>
                <execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="test -f undone || { touch undone; exit 1; }"/></execute>
                <retry attempts="2" backoff="fixed" delay_ms="1"/>
              </compensate>
            </step>
            ${fails('c')}
          </process>`,
        )
      ).settled();
      expect(record.status).toBe('failed');
      const spans = telemetry.spans();
      const [root] = rootsOf(spans);
      expect(root!.name).toBe('run saga');
      const compensations = spans
        .filter((s) => s.name.startsWith('step compensate:'))
        .sort((x, y) => toMs(x.startTime) - toMs(y.startTime));
      expect(
        compensations.map((s) => [
          s.name,
          s.attributes['dirigent.step.attempt'],
          s.attributes['dirigent.step.outcome'],
        ]),
      ).toEqual([
        ['step compensate:b', 1, 'retried'],
        ['step compensate:b', 2, 'completed'],
        ['step compensate:a', 1, 'completed'],
      ]);
      for (const s of compensations) {
        expect(s.attributes['dirigent.step.kind']).toBe('compensate');
        expect(parentIdOf(s)).toBe(root!.spanContext().spanId);
        expect(toMs(s.endTime)).toBeLessThanOrEqual(toMs(root!.endTime));
      }
      expect(compensations[0]!.attributes['dirigent.tool.id']).toBe('dirigent/shell/bash');
      expect(compensations[2]!.attributes['dirigent.tool.id']).toBe('dirigent/util/echo');
    } finally {
      await telemetry.close();
    }
  });
});

function toMs(t: ReadableSpan['startTime']): number {
  return t[0] * 1000 + t[1] / 1e6;
}

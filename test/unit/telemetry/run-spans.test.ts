/**
 * The span tree of embedded runs, read from the SDK's in-memory exporter: one trace per run, one
 * root, no dangling parent; a span per step attempt with its kind, attempt and outcome, which
 * stands for the step's tool call too (its runtime, exit code and outcome: one span per tool
 * step); a foreach item's call under its attempt; a child run under the step that started it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanStatusCode } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  ParentBasedSampler,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirectiveLoader } from '../../../src/engine/directive-loader.js';
import { Engine } from '../../../src/engine/engine.js';
import { ItemDispatcher } from '../../../src/tools/item-dispatcher.js';
import { FileRunStore } from '../../../src/engine/file-run-store.js';
import { traceIdOfRun } from '../../../src/telemetry/run-trace.js';
import { writeDirective } from '../../support/directive-file.js';
import { memoryTelemetry, parentIdOf, rootsOf } from '../../support/telemetry.js';
import { waitFor } from '../../support/wait-for.js';

let project: string;
let telemetry: ReturnType<typeof memoryTelemetry>;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-spans-'));
  telemetry = memoryTelemetry();
});
afterEach(async () => {
  await telemetry.close();
  rmSync(project, { recursive: true, force: true });
});

/** An engine with telemetry; a second one over the same project stands for another process. */
function engine(): Engine {
  const loader = new DirectiveLoader(project);
  return new Engine({
    projectDir: project,
    loader,
    dispatcher: new ItemDispatcher(loader.items, { telemetry: telemetry.options }),
    store: new FileRunStore(project),
    telemetry: telemetry.options,
  });
}

async function run(name: string, xml: string, inputs: Record<string, unknown> = {}) {
  const e = engine();
  const record = await e.run(await e.loader.loadFile(writeDirective(project, name, xml)), inputs);
  await e.dispatcher.close?.();
  return record;
}

const attr = (s: ReadableSpan, name: string) => s.attributes[name];
const named = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const one = (spans: ReadableSpan[], name: string) => {
  const found = named(spans, name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
};
const childrenOf = (spans: ReadableSpan[], parent: ReadableSpan) =>
  spans.filter((s) => parentIdOf(s) === parent.spanContext().spanId);

describe('the spans of an embedded run', () => {
  it('make one trace with the run as its root and a span per step attempt, which tells its tool call', async () => {
    const record = await run(
      'tour',
      `<inputs><input name="items" type="array" default='["a","b"]'/></inputs>
      <process>
        <step name="skipped"><condition path="state.nothing" op="exists"/><render>never</render></step>
        <step name="flaky">
          <execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="test -f marker || { touch marker; exit 1; }"/></execute>
          <retry attempts="3" backoff="fixed" delay_ms="5"/>
        </step>
        <step name="slow" on_error="each">
          <execute item_type="tool" item_id="dirigent/util/sleep"><param name="ms" value="5000"/></execute>
          <timeout seconds="0.1"/>
          <retry attempts="1"/>
        </step>
        <step name="each">
          <foreach over="\${inputs.items}" as="item"><execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="\${item}"/></execute></foreach>
        </step>
      </process>`,
    );
    expect(record.status).toBe('completed');
    const spans = telemetry.spans();
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(
      new Set([traceIdOfRun(record.runId)]),
    );
    const [root] = rootsOf(spans);
    expect(rootsOf(spans)).toHaveLength(1);
    expect(root!.name).toBe('run tour');
    expect(root!.attributes).toMatchObject({
      'dirigent.directive.id': 'tour',
      'dirigent.directive.version': '1.0.0',
      'dirigent.run.id': record.runId,
      'dirigent.run.trigger': 'library',
      'dirigent.run.status': 'completed',
    });
    expect(root!.startTime).toBeDefined();

    const skipped = one(spans, 'step skipped');
    expect(skipped.attributes).toMatchObject({
      'dirigent.step.kind': 'render',
      'dirigent.step.outcome': 'skipped',
    });
    const flaky = named(spans, 'step flaky').sort(
      (a, b) => Number(attr(a, 'dirigent.step.attempt')) - Number(attr(b, 'dirigent.step.attempt')),
    );
    expect(
      flaky.map((s) => [
        attr(s, 'dirigent.step.attempt'),
        attr(s, 'dirigent.step.outcome'),
        attr(s, 'dirigent.tool.outcome'),
        attr(s, 'process.exit.code'),
      ]),
    ).toEqual([
      [1, 'retried', 'failed', 1],
      [2, 'completed', 'completed', 0],
    ]);
    expect(flaky[0]!.attributes).toMatchObject({
      'dirigent.step.kind': 'tool',
      'dirigent.tool.id': 'dirigent/shell/bash',
      'dirigent.runtime.id': 'dirigent/shell/bash',
      'dirigent.runtime.primitive': 'builtin',
      'error.type': 'COMMAND_FAILED',
      'dirigent.step.retry_delay_ms': 5,
    });
    expect(flaky[0]!.status.code).toBe(SpanStatusCode.ERROR);
    for (const attempt of flaky) {
      expect(parentIdOf(attempt)).toBe(root!.spanContext().spanId);
      expect(childrenOf(spans, attempt), 'the call is told by its attempt').toEqual([]);
    }

    const slow = one(spans, 'step slow');
    expect(slow.attributes).toMatchObject({
      'dirigent.step.outcome': 'timed_out',
      'dirigent.tool.outcome': 'timed_out',
      'error.type': 'STEP_TIMEOUT',
    });

    const each = one(spans, 'step each');
    expect(each.attributes).toMatchObject({
      'dirigent.step.kind': 'foreach',
      'dirigent.step.outcome': 'completed',
    });
    const items = childrenOf(spans, each);
    expect(items.map((s) => s.name)).toEqual(['runtime builtin', 'runtime builtin']);
    for (const item of items)
      expect(item.attributes).toMatchObject({
        'dirigent.tool.id': 'dirigent/util/echo',
        'dirigent.step.name': 'each',
        'dirigent.tool.outcome': 'completed',
        'dirigent.tool.call_id': expect.stringMatching(/^each\.\d+\.1\.\d\.1$/),
      });
    expect(spans).toHaveLength(1 + 5 + 2); // the run, five step attempts, two foreach items
  });

  it("hands a tool's process the span of its step attempt as TRACEPARENT", async () => {
    const record = await run(
      'traced',
      `<process><step name="show"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="printf %s &quot;$TRACEPARENT&quot;"/></execute></step></process>
      <outputs><output name="traceparent" value="\${steps.show.result.stdout}"/></outputs>`,
    );
    expect(record.status).toBe('completed');
    const show = one(telemetry.spans(), 'step show');
    const { traceId, spanId } = show.spanContext();
    expect(record.outputs).toEqual({ traceparent: `00-${traceId}-${spanId}-01` });
  });

  it('puts a child run under the step that started it, in the same trace, and marks a failed run', async () => {
    writeDirective(
      project,
      'kid',
      `<inputs><input name="x" type="string"/></inputs><process><step name="hi"><render>\${inputs.x}</render></step></process>`,
    );
    const record = await run(
      'parent',
      `<process>
        <step name="call"><execute item_type="directive" item_id="kid"><param name="x" value="1"/></execute></step>
        <step name="boom">
          <execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="exit 3"/></execute>
          <retry attempts="1"/>
        </step>
      </process>`,
    );
    expect(record.status).toBe('failed');
    const spans = telemetry.spans();
    const roots = rootsOf(spans);
    expect(roots.map((s) => s.name)).toEqual(['run parent']);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    const call = one(spans, 'step call');
    expect(call.attributes['dirigent.step.kind']).toBe('directive');
    const kid = one(spans, 'run kid');
    expect(parentIdOf(kid)).toBe(call.spanContext().spanId);
    expect(kid.attributes).toMatchObject({
      'dirigent.run.trigger': 'child',
      'dirigent.run.depth': 1,
      'dirigent.run.status': 'completed',
    });
    expect(parentIdOf(one(spans, 'step hi'))).toBe(kid.spanContext().spanId);

    const root = roots[0]!;
    expect(root.status).toMatchObject({ code: SpanStatusCode.ERROR });
    expect(root.attributes).toMatchObject({
      'dirigent.run.status': 'failed',
      'error.type': 'COMMAND_FAILED',
    });
    const boom = one(spans, 'step boom');
    expect(boom.attributes).toMatchObject({
      'dirigent.step.outcome': 'failed',
      'dirigent.tool.outcome': 'failed',
      'process.exit.code': 3,
    });
  });

  it('hangs the steps of parallel branches under their block, and records the branch a <next> took', async () => {
    const record = await run(
      'forked',
      `<process>
        <parallel name="both">
          <branch name="left"><step name="l"><render>L</render></step></branch>
          <branch name="right"><step name="r"><render>R</render></step></branch>
        </parallel>
        <step name="pick"><render>x</render><next><when path="result" op="eq" value="x" to="yes"/><otherwise to="no"/></next></step>
        <step name="no"><render>no</render><next to="$end"/></step>
        <step name="yes"><render>yes</render></step>
      </process>`,
    );
    expect(record.status).toBe('completed');
    const spans = telemetry.spans();
    rootsOf(spans);
    const block = one(spans, 'step both');
    expect(block.attributes['dirigent.step.kind']).toBe('parallel');
    expect(
      childrenOf(spans, block)
        .map((s) => s.name)
        .sort(),
    ).toEqual(['step l', 'step r']);
    expect(named(spans, 'step yes')).toHaveLength(1);
    expect(named(spans, 'step no')).toHaveLength(0);
  });

  it('continues the trace of a run that waited and was resumed by another engine, the wait in one span', async () => {
    const file = writeDirective(
      project,
      'asks',
      `<process><step name="ask"><instruction>Ship it?</instruction></step><step name="after"><render>\${steps.ask.result}</render></step></process>`,
    );
    const first = engine();
    const waiting = await first.run(await first.loader.loadFile(file), {});
    expect(waiting.status).toBe('waiting');
    first.release();
    expect(telemetry.spans()).toEqual([]); // nothing has ended yet
    // Time passing is what this checks: answered 30 ms after the run began, the step's span
    // covers those 30 ms.
    await waitFor(() => Date.now() >= waiting.startedAt + 30, { what: '30 ms of waiting' });
    const done = await engine().signal(waiting.runId, 'ask', 'yes');
    expect(done.status).toBe('completed');
    const spans = telemetry.spans();
    expect(rootsOf(spans).map((s) => s.name)).toEqual(['run asks']);
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(
      new Set([traceIdOfRun(waiting.runId)]),
    );
    const ask = one(spans, 'step ask');
    expect(ask.attributes).toMatchObject({
      'dirigent.step.kind': 'instruction',
      'dirigent.step.signal': 'ask',
      'dirigent.step.outcome': 'completed',
    });
    // The span covers the whole wait, from the step's start in the first engine.
    const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
    expect(ms(ask.endTime) - ms(ask.startTime)).toBeGreaterThanOrEqual(25);
    expect(Math.abs(ms(one(spans, 'run asks').startTime) - waiting.startedAt)).toBeLessThan(2);
  });

  it('counts runs, step attempts and tool calls by outcome, with durations in seconds', async () => {
    const record = await run(
      'counted',
      `<process><step name="a"><execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="1"/></execute></step></process>`,
    );
    expect(record.status).toBe('completed');
    const m = await telemetry.metrics();
    expect(m.get('dirigent.run.started')).toEqual([
      {
        attributes: { 'dirigent.directive.id': 'counted', 'dirigent.run.trigger': 'library' },
        value: 1,
      },
    ]);
    expect(m.get('dirigent.run.ended')![0]).toMatchObject({
      attributes: { 'dirigent.run.status': 'completed' },
      value: 1,
    });
    expect(m.get('dirigent.step.attempts')![0]).toMatchObject({
      attributes: { 'dirigent.step.name': 'a', 'dirigent.step.outcome': 'completed' },
      value: 1,
    });
    expect(m.get('dirigent.tool.calls')![0]).toMatchObject({
      attributes: {
        'dirigent.tool.id': 'dirigent/util/echo',
        'dirigent.tool.outcome': 'completed',
      },
      value: 1,
    });
    const duration = m.get('dirigent.run.duration')![0]!.value as { count: number; sum: number };
    expect(duration.count).toBe(1);
    expect(duration.sum).toBeLessThan(10); // seconds, not milliseconds
  });

  it('records values only when asked, and never a declared secret', async () => {
    const secret = 'sk-live-0123456789abcdef';
    const env = { ...process.env, API_TOKEN: secret };
    const file = writeDirective(
      project,
      'secretive',
      `<metadata><secrets><secret name="API_TOKEN">a key</secret></secrets></metadata>
      <inputs><input name="who" type="string"/></inputs>
      <process>
        <step name="call"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo '{input:who} {env:API_TOKEN}'"/></execute></step>
        <step name="show"><render>token {env:API_TOKEN}</render></step>
      </process>
      <outputs><output name="said" value="\${steps.call.result.stdout}"/><output name="shown" value="\${steps.show.result}"/></outputs>`,
    );
    for (const recordValues of [false, true]) {
      const loader = new DirectiveLoader(project);
      const options = { ...telemetry.options, recordValues };
      const e = new Engine({
        projectDir: project,
        loader,
        dispatcher: new ItemDispatcher(loader.items, { telemetry: options, env }),
        telemetry: options,
        env,
      });
      const record = await e.run(await e.loader.loadFile(file), { who: 'Ada' });
      await e.dispatcher.close?.();
      expect(record.status).toBe('completed');
    }
    const [quiet, recorded] = [0, 1].map(
      (i) => telemetry.spans().filter((s) => s.name === 'run secretive')[i]!,
    );
    expect(quiet!.attributes['dirigent.run.inputs']).toBeUndefined();
    expect(recorded!.attributes['dirigent.run.inputs']).toBe('{"who":"Ada"}');
    expect(recorded!.attributes['dirigent.run.outputs']).toContain('Ada ***');
    const call = telemetry
      .spans()
      .filter((s) => s.name === 'step call')
      .at(-1)!;
    expect(call.attributes['dirigent.tool.result']).toContain('Ada ***');
    expect(call.attributes['dirigent.tool.params']).toContain('***');
    const everything = JSON.stringify(telemetry.spans().map((s) => [s.attributes, s.events]));
    expect(everything).not.toContain(secret);
  });

  it('records no span of a run its sampler leaves out, but still its metrics', async () => {
    await telemetry.close();
    telemetry = memoryTelemetry(new ParentBasedSampler({ root: new AlwaysOffSampler() }));
    const record = await run(
      'unsampled',
      `<process><step name="a"><execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="1"/></execute></step></process>`,
    );
    expect(record.status).toBe('completed');
    expect(telemetry.spans()).toEqual([]);
    expect((await telemetry.metrics()).get('dirigent.tool.calls')![0]!.value).toBe(1);
  });

  it('records nothing, and makes no trace, without telemetry', async () => {
    const loader = new DirectiveLoader(project);
    const e = new Engine({
      projectDir: project,
      loader,
      dispatcher: new ItemDispatcher(loader.items),
    });
    const file = writeDirective(
      project,
      'quiet',
      '<process><step name="a"><render>x</render></step></process>',
    );
    const r = e.start(await e.loader.loadFile(file), {});
    await r.settled();
    expect(r.trace).toBeUndefined();
    expect(telemetry.spans()).toEqual([]);
  });
});

/**
 * What OpenTelemetry costs a run: the embedded engine (100 sequential echo steps, with an
 * `ItemDispatcher` as the CLI builds it, so that each tool call is traced as the CLI traces it)
 * and a distributed run on Redis (20 sequential echo steps, each call run in process by the
 * worker driving the run), each with telemetry off, recording into memory, and exporting over
 * OTLP/HTTP (protobuf, batched) as `startTelemetry` sets it up, to a sink on a worker thread. Every
 * figure is a ratio against "off" measured in the same rounds; the SDK alone recording what a step
 * records is the floor of the embedded rows, and a CPU profile says where an embedded step's time
 * goes.
 */
import { Worker } from 'node:worker_threads';
import {
  ROOT_CONTEXT,
  SpanKind,
  type Context,
  type Histogram,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  AggregationTemporality,
  MeterProvider,
  MetricReader,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { RedisClient } from '../src/redis/redis-client.js';
import { DirectiveLoader, type LoadedDirective } from '../src/engine/directive-loader.js';
import { Engine } from '../src/engine/engine.js';
import { MemoryRunStore } from '../src/engine/memory-run-store.js';
import type { RunRecord } from '../src/engine/run-record.js';
import { connectRedis, pingRedis, redisDownMessage } from '../src/redis/redis-connection.js';
import { Attr, DURATION_BUCKETS_S, Metric } from '../src/telemetry/attributes.js';
import { dirigentIdGenerator } from '../src/telemetry/pinned-id-generator.js';
import type { TelemetryOptions } from '../src/telemetry/telemetry.js';
import { ItemDispatcher } from '../src/tools/item-dispatcher.js';
import { benchRow, withinRounds, type BenchRow } from './bench-row.js';
import { cpuShares, type Frame } from './cpu-shares.js';
import type { BenchSection } from './bench-section.js';
import {
  SIZE as DISTRIBUTED_SIZE,
  sequenceRig,
  timed,
  withDeployment,
  type Deployment,
  type Timed,
} from './distributed-bench.js';
import { echoSequenceDirective } from './echo-sequence-directive.js';
import { interleavedRounds, type RoundOptions, type RoundTask } from './interleaved-rounds.js';
import { median } from './median.js';

/** Telemetry on (exporting) may make a step at most this many times slower than off. */
export const TELEMETRY_GOALS = {
  /** Embedded, where the SDK's own cost per step is the floor (shown beside). */
  embedded: 1.5,
  /** On Redis, exporting over OTLP. */
  redis: 1.15,
} as const;

/** Sizes of the telemetry benchmark. */
export interface TelemetryBenchOptions extends RoundOptions {
  /** Steps of the embedded sequential directive. */
  sequenceSteps: number;
  /** Embedded runs per timed tinybench iteration (see {@link embeddedTask}). */
  runsPerIteration: number;
  /** Rounds of the distributed measurement (each side a fresh deployment). */
  redisRounds: number;
  /** The engine benchmark's µs per step on the same directive, shown beside "off". */
  engineSequenceUs?: number;
}

/** How telemetry is set up. */
type Variant = 'off' | 'memory' | 'otlp';
const VARIANTS: readonly Variant[] = ['off', 'memory', 'otlp'];

// ---- the OTLP sink ----

/**
 * A node:http server on a worker thread that answers 200 to every POST and counts what it got:
 * [spans, trace requests, metric requests, unreadable trace requests]. It stands for a collector
 * in another process: its reading must not be timed as this process's work. A trace request is
 * an OTLP `ExportTraceServiceRequest` in protobuf: its spans are counted by walking the wire
 * format (resource spans, field 1; their scope spans, field 2; their spans, field 2).
 */
const SINK_SOURCE = `
const { createServer } = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const counts = new Int32Array(workerData);
function varint(buf, i) {
  let v = 0, shift = 0, b;
  do { b = buf[i++]; if (b === undefined) throw new Error('truncated'); v += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
  return [v, i];
}
/** The [start, end) of each length-delimited field \`want\` in buf[start, end). */
function fields(buf, start, end, want) {
  const out = [];
  let i = start;
  while (i < end) {
    const [key, j] = varint(buf, i);
    i = j;
    const type = key % 8;
    if (type === 0) i = varint(buf, i)[1];
    else if (type === 1) i += 8;
    else if (type === 5) i += 4;
    else if (type === 2) {
      const [len, k] = varint(buf, i);
      if (Math.floor(key / 8) === want) out.push([k, k + len]);
      i = k + len;
    } else throw new Error('wire type ' + type);
  }
  if (i !== end) throw new Error('overrun');
  return out;
}
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.url === '/v1/traces') {
      Atomics.add(counts, 1, 1);
      try {
        const buf = Buffer.concat(chunks);
        let n = 0;
        for (const [a, b] of fields(buf, 0, buf.length, 1))
          for (const [c, d] of fields(buf, a, b, 2)) n += fields(buf, c, d, 2).length;
        Atomics.add(counts, 0, n);
      } catch {
        Atomics.add(counts, 3, 1);
      }
    } else if (req.url === '/v1/metrics') Atomics.add(counts, 2, 1);
    res.writeHead(200, { 'content-type': 'application/x-protobuf' });
    res.end();
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

interface SinkCounts {
  spans: number;
  traceRequests: number;
  metricRequests: number;
  unreadable: number;
}

interface OtlpSink {
  endpoint: string;
  counts(): SinkCounts;
  close(): Promise<void>;
}

async function startSink(): Promise<OtlpSink> {
  const shared = new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT);
  const counts = new Int32Array(shared);
  const worker = new Worker(SINK_SOURCE, { eval: true, workerData: shared });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts: () => ({
      spans: Atomics.load(counts, 0),
      traceRequests: Atomics.load(counts, 1),
      metricRequests: Atomics.load(counts, 2),
      unreadable: Atomics.load(counts, 3),
    }),
    close: async () => void (await worker.terminate()),
  };
}

// ---- the telemetry of one side ----

/** What one recorder saw, summed over the recorders of a variant. */
interface Tally {
  runs: number;
  steps: number;
  /** Spans ended into the tracer provider. */
  spans: number;
  /** Spans the OTLP sink received. */
  delivered: number;
  /** Tool calls the `dirigent.tool.calls` counter recorded (in-memory only). */
  toolCalls: number;
  /** Metric export requests the OTLP sink received. */
  metricRequests: number;
}

const emptyTally = (): Tally => ({
  runs: 0,
  steps: 0,
  spans: 0,
  delivered: 0,
  toolCalls: 0,
  metricRequests: 0,
});

function addTally(into: Tally, from: Partial<Tally>): void {
  for (const k of Object.keys(from) as (keyof Tally)[]) into[k] += from[k] ?? 0;
}

/** Providers of one side (a tinybench phase, or one deployment), and how to end them. */
interface Recorder {
  options: TelemetryOptions;
  /** After each timed iteration: empties the in-memory exporter (it grows without bound). */
  drain(): void;
  /** Sends what the batching processor holds (OTLP), and waits for it. */
  flush(): Promise<void>;
  /** Flushes and shuts the providers down (outside the timing); what they recorded. */
  close(): Promise<Partial<Tally>>;
}

/** A metric reader that only collects when asked, as the tests' in-memory one. */
class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Counts the spans that end, before the batching processor (which may drop some). */
class CountingProcessor implements SpanProcessor {
  ended = 0;
  onStart(_span: Span, _parent: Context): void {}
  onEnd(_span: ReadableSpan): void {
    this.ended++;
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function memoryRecorder(): Recorder {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    idGenerator: dirigentIdGenerator,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  let spans = 0;
  const drain = () => {
    spans += exporter.getFinishedSpans().length;
    exporter.reset();
  };
  return {
    options: { tracerProvider, meterProvider },
    drain,
    flush: () => Promise.resolve(),
    async close() {
      drain();
      const { resourceMetrics } = await reader.collect();
      let toolCalls = 0;
      for (const scope of resourceMetrics.scopeMetrics)
        for (const m of scope.metrics)
          if (m.descriptor.name === Metric.TOOL_CALLS)
            for (const p of m.dataPoints) toolCalls += p.value as number;
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
      return { spans, toolCalls };
    },
  };
}

function otlpRecorder(sink: OtlpSink): Recorder {
  const counting = new CountingProcessor();
  const tracerProvider = new BasicTracerProvider({
    idGenerator: dirigentIdGenerator,
    spanProcessors: [
      counting,
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${sink.endpoint}/v1/traces` })),
    ],
  });
  const meterProvider = new MeterProvider({
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: `${sink.endpoint}/v1/metrics` }),
      }),
    ],
  });
  const before = sink.counts();
  return {
    options: { tracerProvider, meterProvider },
    drain: () => {},
    flush: () => tracerProvider.forceFlush(),
    async close() {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
      const after = sink.counts();
      if (after.unreadable > 0)
        throw new Error('the OTLP sink got trace requests it could not read');
      return {
        spans: counting.ended,
        delivered: after.spans - before.spans,
        metricRequests: after.metricRequests - before.metricRequests,
      };
    },
  };
}

function recorder(variant: Variant, sink: OtlpSink): Recorder | undefined {
  return variant === 'off'
    ? undefined
    : variant === 'memory'
      ? memoryRecorder()
      : otlpRecorder(sink);
}

// ---- embedded ----

/** Lets timers and I/O run (the OTLP exporter's requests and their answers), as any real tool does. */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** An engine as the CLI makes one, its dispatcher and itself recording into `telemetry`. */
function embeddedEngine(loader: DirectiveLoader, telemetry: TelemetryOptions | undefined): Engine {
  return new Engine({
    projectDir: loader.projectDir,
    dispatcher: new ItemDispatcher(loader.items, {
      limits: loader.policy.limits,
      ...(telemetry && { telemetry }),
    }),
    loader,
    store: new MemoryRunStore(),
    env: {},
    ...(telemetry && { telemetry }),
  });
}

function expectCompleted(record: RunRecord, steps: number): void {
  if (record.status === 'completed' && record.steps.length === steps) return;
  const why = record.error ? `: ${record.error.code} ${record.error.message}` : '';
  throw new Error(
    `run ${record.runId} ended ${record.status} after ${record.steps.length} of ${steps} steps${why}`,
  );
}

/**
 * `runsPerIteration` runs of the directive per tinybench iteration, each followed by a turn of the
 * event loop, on a fresh engine, dispatcher, store and recorder per phase. The recorder of the
 * task's phase before is flushed and shut down first, outside the timing (until then, the OTLP
 * one holds under a batch, sent only if its 5 s timer fires meanwhile, in some other task's
 * iteration that the median leaves out). A batch of runs per iteration, rather than one, puts
 * the batching processor's exports (one per 512 spans) into every timed iteration, not into a
 * few that the median would leave out.
 */
function embeddedTask(
  variant: Variant,
  sink: OtlpSink,
  loader: DirectiveLoader,
  loaded: LoadedDirective,
  steps: number,
  runsPerIteration: number,
  tally: Tally,
  closing: (() => Promise<void>)[],
): RoundTask {
  let engine: Engine | undefined;
  let rec: Recorder | undefined;
  const closeRecorder = async () => {
    const r = rec;
    rec = undefined;
    if (r !== undefined) addTally(tally, await r.close());
  };
  closing.push(closeRecorder);
  return {
    name: variant,
    units: steps * runsPerIteration,
    // interleavedRounds hands the hook to tinybench's `beforeAll`, which awaits what it returns.
    beforeEachPhase: async () => {
      await closeRecorder();
      rec = recorder(variant, sink);
      engine = embeddedEngine(loader, rec?.options);
    },
    fn: async () => {
      for (let i = 0; i < runsPerIteration; i++) {
        const record = await engine!.run(loaded, {});
        expectCompleted(record, steps);
        tally.runs++;
        tally.steps += record.steps.length;
        await yieldToLoop();
      }
      rec?.drain();
    },
  };
}

/**
 * The SDK alone recording what a completed echo step records, `batch` times per iteration, into
 * the providers of `variant`: the step attempt's span, which stands for its tool call (same name
 * and attributes, started and ended with ids from Dirigent's generator), and the two histogram
 * points (step and tool durations; the two counts are Dirigent's own, read when a reader
 * collects, and not the SDK's work per step). No engine, no Dirigent code: the floor of what a
 * step's telemetry can cost with this SDK.
 */
function sdkFloorTask(
  variant: Exclude<Variant, 'off'>,
  sink: OtlpSink,
  batch: number,
  closing: (() => Promise<void>)[],
): RoundTask {
  let rec: Recorder | undefined;
  let tracer: Tracer | undefined;
  let stepDuration: Histogram | undefined;
  let toolDuration: Histogram | undefined;
  const closeRecorder = async () => {
    const r = rec;
    rec = undefined;
    if (r !== undefined) await r.close();
  };
  closing.push(closeRecorder);
  const tool = 'dirigent/util/echo';
  const directive = 'echo-sequence';
  const stepSet = {
    [Attr.DIRECTIVE_ID]: directive,
    [Attr.STEP_KIND]: 'tool',
    [Attr.STEP_OUTCOME]: 'completed',
  };
  const toolSet = { [Attr.TOOL_ID]: tool, [Attr.TOOL_OUTCOME]: 'completed' };
  return {
    name: `sdk-${variant}`,
    units: batch,
    beforeEachPhase: async () => {
      await closeRecorder();
      rec = recorder(variant, sink)!;
      tracer = rec.options.tracerProvider!.getTracer('dirigent');
      const meter = rec.options.meterProvider!.getMeter('dirigent');
      const seconds = (name: string) =>
        meter.createHistogram(name, {
          unit: 's',
          advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
        });
      stepDuration = seconds(Metric.STEP_DURATION);
      toolDuration = seconds(Metric.TOOL_DURATION);
    },
    fn: async () => {
      const runId = `run-${Math.random()}`;
      for (let i = 0; i < batch; i++) {
        const step = `s${i % 100}`;
        const started = Date.now();
        const ended = Date.now();
        toolDuration!.record((ended - started) / 1000, toolSet);
        tracer!
          .startSpan(
            `step ${step}`,
            {
              kind: SpanKind.INTERNAL,
              startTime: started,
              attributes: {
                [Attr.TOOL_CALL_ID]: `${step}.${i}.1`,
                [Attr.RUNTIME_ID]: tool,
                [Attr.RUNTIME_PRIMITIVE]: 'builtin',
                [Attr.TOOL_OUTCOME]: 'completed',
                [Attr.DIRECTIVE_ID]: directive,
                [Attr.RUN_ID]: runId,
                [Attr.STEP_NAME]: step,
                [Attr.STEP_KIND]: 'tool',
                [Attr.STEP_ATTEMPT]: 1,
                [Attr.STEP_OUTCOME]: 'completed',
                [Attr.TOOL_ID]: tool,
              },
            },
            ROOT_CONTEXT,
          )
          .end(ended);
        stepDuration!.record((ended - started) / 1000, stepSet);
        // As the engine's runs do, a turn of the event loop every 100 steps (the exporter sends).
        if (i % 100 === 99) await yieldToLoop();
      }
      rec!.drain();
    },
  };
}

// ---- where an embedded step's time goes ----

/** What a CPU profile of embedded runs is split into, by the file of each sampled function. */
const PROFILE_PARTS = {
  rest: "the engine and the tool (everything else, Node's own work included)",
  gc: 'garbage collection',
  spans: 'the SDK making and ending spans (`@opentelemetry/sdk-trace`, `api`, `core`)',
  metrics: 'the SDK recording metric points (`@opentelemetry/sdk-metrics`)',
  export: 'the SDK exporting (`@opentelemetry/otlp-*`, `exporter-*`, `protobufjs`)',
  dirigent:
    "Dirigent's telemetry code (`telemetry/`, `run-spans.ts`, `job-spans.ts`, `traced-dispatch.ts`)",
} as const;
type ProfilePart = keyof typeof PROFILE_PARTS;

function profilePart({ url, functionName }: Frame): ProfilePart {
  if (functionName === '(garbage collector)') return 'gc';
  if (url.includes('@opentelemetry/sdk-metrics')) return 'metrics';
  if (/@opentelemetry\/(otlp-|exporter-)|\/protobufjs\//.test(url)) return 'export';
  if (url.includes('@opentelemetry/')) return 'spans';
  if (/\/src\/(telemetry\/|engine\/run-spans|redis\/job-spans|tools\/traced-dispatch)/.test(url))
    return 'dirigent';
  return 'rest';
}

/** CPU µs per step by part, for one variant. */
type StepProfile = Record<ProfilePart, number>;

/**
 * CPU profiles of embedded runs with telemetry off and exporting over OTLP, on a fresh engine
 * each (warmed up by as many unprofiled runs): `rounds` profiles of `runs` runs per variant, taken
 * in turns so that both meet the same load, the recorder flushed inside each so that the export
 * of every span its runs made is in it. CPU µs per step by part, per variant.
 */
async function profileSteps(
  sink: OtlpSink,
  loader: DirectiveLoader,
  loaded: LoadedDirective,
  steps: number,
  runs: number,
  rounds: number,
): Promise<Record<'off' | 'otlp', StepProfile>> {
  const variants = ['off', 'otlp'] as const;
  const recs = { off: undefined, otlp: recorder('otlp', sink) };
  try {
    const sides = variants.map((v) => {
      const engine = embeddedEngine(loader, recs[v]?.options);
      const byPart = new Map<string, number>();
      const some = async () => {
        for (let i = 0; i < runs; i++) {
          expectCompleted(await engine.run(loaded, {}), steps);
          await yieldToLoop();
        }
        await recs[v]?.flush();
      };
      return { v, some, byPart };
    });
    for (const side of sides) await side.some();
    for (let r = 0; r < rounds; r++)
      for (let i = 0; i < sides.length; i++) {
        const side = sides[(r + i) % sides.length]!;
        const { byCategory } = await cpuShares(side.some, profilePart);
        for (const [part, ms] of byCategory)
          side.byPart.set(part, (side.byPart.get(part) ?? 0) + ms);
      }
    const perStep = (byPart: Map<string, number>) => {
      const out = {} as StepProfile;
      for (const part of Object.keys(PROFILE_PARTS) as ProfilePart[])
        out[part] = ((byPart.get(part) ?? 0) * 1000) / (rounds * runs * steps);
      return out;
    };
    return { off: perStep(sides[0]!.byPart), otlp: perStep(sides[1]!.byPart) };
  } finally {
    await recs.otlp?.close();
  }
}

// ---- on Redis ----

/** One side on a fresh deployment: {@link sequenceRig} timed, its runs and steps counted. */
async function redisSide(
  redis: RedisClient,
  loaded: LoadedDirective,
  variant: Variant,
  sink: OtlpSink,
  tally: Tally,
): Promise<Timed> {
  const rec = recorder(variant, sink);
  try {
    return await withDeployment(
      redis,
      (d) => {
        const counted: Deployment = {
          prefix: d.prefix,
          async runMany(l, inputs, count) {
            const out = await d.runMany(l, inputs, count);
            tally.runs += out.records.length;
            for (const r of out.records) tally.steps += r.steps.length;
            return out;
          },
        };
        return timed(redis, sequenceRig(counted, loaded));
      },
      rec?.options,
    );
  } finally {
    if (rec !== undefined) addTally(tally, await rec.close());
  }
}

// ---- the section ----

type PerVariant<T> = Record<Variant, T>;
type On = Exclude<Variant, 'off'>;

/** µs per step of each embedded task, per round; `sdk`: the SDK's floor per variant. */
type Embedded = PerVariant<number[]> & { sdk: Record<On, number[]> };

/** Embedded runs in each profile, and profiles per variant (see {@link profileSteps}). */
const PROFILED_RUNS = 20;
const PROFILE_ROUNDS = 5;

/** Measures the engine embedded, then on the Redis at `REDIS_URL` (default 127.0.0.1:6379). */
export async function telemetryBench(options: TelemetryBenchOptions): Promise<BenchSection> {
  const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  if (!(await pingRedis(url, 2000))) throw new Error(redisDownMessage(url));
  // The floor's exports go to a sink of their own: its spans are not the engine's.
  const [sink, floorSink] = await Promise.all([startSink(), startSink()]);
  const loader = new DirectiveLoader(process.cwd());
  const directive = echoSequenceDirective(options.sequenceSteps);
  const loaded = loader.fromText(directive.file, directive.text);
  const embeddedTally: PerVariant<Tally> = {
    off: emptyTally(),
    memory: emptyTally(),
    otlp: emptyTally(),
  };
  const redisTally: PerVariant<Tally> = {
    off: emptyTally(),
    memory: emptyTally(),
    otlp: emptyTally(),
  };
  const closing: (() => Promise<void>)[] = [];
  try {
    const t = await interleavedRounds(
      [
        ...VARIANTS.map((v) =>
          embeddedTask(
            v,
            sink,
            loader,
            loaded,
            directive.steps,
            options.runsPerIteration,
            embeddedTally[v],
            closing,
          ),
        ),
        ...(['memory', 'otlp'] as const).map((v) =>
          sdkFloorTask(v, floorSink, options.sequenceSteps * options.runsPerIteration, closing),
        ),
      ],
      options,
    );
    for (const close of closing) await close();
    const embedded: Embedded = {
      off: t.get('off')!,
      memory: t.get('memory')!,
      otlp: t.get('otlp')!,
      sdk: { memory: t.get('sdk-memory')!, otlp: t.get('sdk-otlp')! },
    };
    const profiles = await profileSteps(
      sink,
      loader,
      loaded,
      directive.steps,
      PROFILED_RUNS,
      PROFILE_ROUNDS,
    );

    const redis = connectRedis(url);
    const distributed: PerVariant<Timed[]> = { off: [], memory: [], otlp: [] };
    try {
      const sequence = loader.fromText(
        `bench/echo-sequence-${DISTRIBUTED_SIZE.steps}.md`,
        echoSequenceDirective(DISTRIBUTED_SIZE.steps).text,
      );
      for (let round = 0; round < options.redisRounds; round++) {
        for (let i = 0; i < VARIANTS.length; i++) {
          const v = VARIANTS[(round + i) % VARIANTS.length]!;
          distributed[v].push(await redisSide(redis, sequence, v, sink, redisTally[v]));
        }
      }
    } finally {
      await redis.quit();
    }
    for (const tally of [embeddedTally.otlp, redisTally.otlp]) {
      if (tally.delivered === 0) throw new Error('no span reached the OTLP sink');
      if (tally.metricRequests === 0) throw new Error('no metrics reached the OTLP sink');
    }
    for (const tally of [embeddedTally.memory, redisTally.memory]) {
      if (tally.toolCalls !== tally.steps)
        throw new Error(
          `${tally.toolCalls} tool calls counted by the metric, ${tally.steps} steps run`,
        );
    }
    return section(options, embedded, profiles, distributed, embeddedTally, redisTally);
  } finally {
    for (const close of closing) await close().catch(() => undefined);
    await Promise.all([sink.close(), floorSink.close()]);
  }
}

const fixed = (x: number, digits = 1) => x.toFixed(digits);

function signed(x: number, digits = 0): string {
  return `${x >= 0 ? '+' : ''}${x.toFixed(digits)}`;
}

function section(
  options: TelemetryBenchOptions,
  embedded: Embedded,
  profiles: Record<'off' | 'otlp', StepProfile>,
  distributed: PerVariant<Timed[]>,
  embeddedTally: PerVariant<Tally>,
  redisTally: PerVariant<Tally>,
): BenchSection {
  const goal = (limit: number, ratio: number, floor?: string) => ({
    text: `≤ ${limit}× off${floor ?? ''}`,
    met: () => ratio <= limit,
  });
  const perStep = (tally: Tally) => (tally.steps === 0 ? 0 : tally.spans / tally.steps);
  const delivered = (tally: Tally) =>
    tally.delivered === tally.spans
      ? `all ${tally.spans.toLocaleString('en-US')} spans reached the sink`
      : `${tally.delivered.toLocaleString('en-US')} of ${tally.spans.toLocaleString('en-US')} ` +
        'spans reached the sink (the rest dropped: the batching queue was full, or an export failed)';

  // Embedded: each variant against off, and the SDK's floor against off, within each round.
  const ratio = (v: On) => withinRounds(embedded[v], embedded.off, (s, b) => s / b);
  const extra = (v: On) => withinRounds(embedded[v], embedded.off, (s, b) => s - b);
  const floorUs = (v: On) => median(embedded.sdk[v]);
  const floorRatio = (v: On) => withinRounds(embedded.sdk[v], embedded.off, (s, b) => (b + s) / b);
  const embeddedRow = (v: On, name: string, more: string): BenchRow =>
    benchRow(
      name,
      embedded[v],
      'steps/s',
      `**${fixed(ratio(v), 2)}×** off's time per step (+${fixed(extra(v), 2)} µs/step; the SDK ` +
        `alone: +${fixed(floorUs(v), 2)}, ${fixed(floorRatio(v), 2)}×); ` +
        `${fixed(perStep(embeddedTally[v]), 2)} spans/step${more}`,
      goal(TELEMETRY_GOALS.embedded, ratio(v), ` (floor: ${fixed(floorRatio(v), 2)}×)`),
    );
  const floorRow = (v: On, how: string): BenchRow =>
    benchRow(
      `reference: the SDK alone recording what an echo step records ${how}, no engine`,
      embedded.sdk[v],
      'steps/s',
      `floor of the ${v === 'memory' ? 'in-memory' : 'OTLP'} row: off's time plus this is ` +
        `${fixed(floorRatio(v), 2)}× off`,
    );

  // On Redis.
  const us = (xs: readonly Timed[]) => xs.map((x) => x.us);
  const cpu = (xs: readonly Timed[]) => xs.map((x) => x.nodeCpuUs);
  const redisRatio = (v: On) =>
    withinRounds(us(distributed[v]), us(distributed.off), (s, b) => s / b);
  const cpuRatio = (v: On) =>
    withinRounds(cpu(distributed[v]), cpu(distributed.off), (s, b) => s / b);
  const cpuExtra = (v: On) =>
    withinRounds(cpu(distributed[v]), cpu(distributed.off), (s, b) => s - b);
  const redisRow = (v: On, name: string, more: string, judged: boolean): BenchRow =>
    benchRow(
      name,
      us(distributed[v]),
      'steps/s',
      `**${fixed(redisRatio(v), 2)}×** off's time per step ` +
        `(${signed(withinRounds(us(distributed[v]), us(distributed.off), (s, b) => s - b))} µs/step); ` +
        `Node CPU ${fixed(cpuRatio(v), 2)}× off's (${signed(cpuExtra(v))} µs/step); ` +
        `${fixed(perStep(redisTally[v]), 2)} spans/step${more}`,
      judged ? goal(TELEMETRY_GOALS.redis, redisRatio(v)) : undefined,
    );

  const steps = options.sequenceSteps;
  const engineUs = options.engineSequenceUs;
  const offUs = median(embedded.off);
  const seq = DISTRIBUTED_SIZE.steps;
  const redisOffUs = median(us(distributed.off));
  const redisOffCpu = median(cpu(distributed.off));
  const meets = (r: number, limit: number) =>
    `${r <= limit ? 'meets' : '**misses**'} it (${fixed(r, 2)}×)`;

  // The profiles: µs per step of each part, with telemetry off and exporting over OTLP.
  const p = profiles;
  const partsOf = (x: StepProfile) =>
    (Object.keys(PROFILE_PARTS) as ProfilePart[])
      .filter((k) => x[k] >= 0.005)
      .map((k) => `${PROFILE_PARTS[k]} ${fixed(x[k], 2)} µs`)
      .join(', ');
  const sdkPart = p.otlp.spans + p.otlp.metrics + p.otlp.export;
  const dirigentPart = p.otlp.dirigent;
  const telemetryCode = sdkPart + dirigentPart;
  const gcPart = p.otlp.gc - p.off.gc;

  return {
    title: 'Telemetry overhead',
    rows: [
      benchRow(
        `embedded: ${steps} sequential echo steps, \`ItemDispatcher\`, telemetry off`,
        embedded.off,
        'steps/s',
        engineUs === undefined
          ? 'baseline'
          : `baseline (the engine section's \`BuiltinDispatcher\` run: ${fixed(engineUs, 2)} µs/step)`,
      ),
      embeddedRow('memory', '… telemetry on, in memory (spans and metrics)', ''),
      embeddedRow(
        'otlp',
        '… telemetry on, OTLP/HTTP protobuf export (batched spans, periodic metrics)',
        `; ${delivered(embeddedTally.otlp)}`,
      ),
      floorRow('memory', '(1 span into the in-memory exporter, 2 histogram points)'),
      floorRow('otlp', '(1 span exported over OTLP, 2 histogram points)'),
      benchRow(
        `on Redis: ${seq} sequential echo steps (each call in process on the worker driving the run), telemetry off, per step`,
        us(distributed.off),
        'steps/s',
      ),
      redisRow('memory', '… telemetry on, in memory (spans and metrics)', '', false),
      redisRow(
        'otlp',
        '… telemetry on, OTLP/HTTP protobuf export (batched spans, periodic metrics)',
        `; ${delivered(redisTally.otlp)}`,
        true,
      ),
    ],
    notes: [
      'Telemetry is given as `TelemetryOptions` to the `Engine` and its `ItemDispatcher` (embedded), ' +
        'or to the `RunWorker`, the `ToolWorker` and the `RunsClient` (on Redis, one of each in ' +
        "this process, on a fresh key prefix per side, as in the distributed section: a step's " +
        'call runs in process on the worker driving the run, an eager call). "In memory" is a ' +
        "`BasicTracerProvider` (Dirigent's id generator) with a `SimpleSpanProcessor` into an " +
        '`InMemorySpanExporter`, emptied after every timed iteration, as the tests record, and a ' +
        '`MeterProvider` whose reader is only read at the end. "OTLP" is what `startTelemetry` ' +
        "sets up for `OTEL_EXPORTER_OTLP_ENDPOINT` with the SDK's default protocol: a " +
        '`BatchSpanProcessor` (SDK defaults: batches of 512, a queue of 2,048, 5 s delay) into the ' +
        'OTLP/HTTP protobuf trace exporter, and a `PeriodicExportingMetricReader` (60 s, so metrics ' +
        'are exported at shutdown, outside the timing; recording into the aggregations is timed) ' +
        'into the OTLP/HTTP protobuf metric exporter, both to a node:http sink on 127.0.0.1 that ' +
        'answers 200 and counts the spans; it runs on a worker thread, as a collector would in ' +
        "another process, so its reading is not this thread's. Providers are fresh per tinybench " +
        'phase (per side on Redis) and flushed and shut down outside the timing. Embedded, a timed ' +
        `iteration is ${options.runsPerIteration} runs, each followed by a turn of the event loop ` +
        '(the echo tool never yields, and without it the exporter could not send until the phase ' +
        'ended); µs per op is per step.',
      'Off costs nothing measurable because it does nothing: without providers `Telemetry.of` ' +
        'returns undefined, the engine keeps no `RunSpans` for the run and `ItemDispatcher.dispatch` ' +
        'calls the tool without `tracedDispatch`; no OpenTelemetry object is made. ' +
        `The off baseline here takes ${fixed(offUs, 2)} µs/step` +
        (engineUs === undefined
          ? ''
          : ` against the engine section's ${fixed(engineUs, 2)} µs/step for the same directive ` +
            'with a `BuiltinDispatcher`, measured in other rounds: the `ItemDispatcher` does a ' +
            'little more per call (the built-in lookup, the result size check), and the machine ' +
            'may have drifted; neither is telemetry') +
        '.',
      `What a step records: embedded, ${fixed(perStep(embeddedTally.memory), 2)} spans per step: ` +
        "its attempt's span, which tells its tool call too (runtime, primitive, exit code, " +
        "outcome), and a share of the run's; and four metric points, two durations (histograms, " +
        'which the SDK records by hashing the attribute set every time) and two counts (kept by ' +
        'Dirigent per attribute set, bound once, and read by an observable counter when a reader ' +
        'collects). The reference rows are the SDK alone doing what the SDK must do for that ' +
        '(one span with the same name and attributes, two histogram points), with no engine: ' +
        "off's time plus theirs is the best ratio this SDK allows.",
      `The goals: embedded ≤ ${TELEMETRY_GOALS.embedded}× off, on Redis exporting ≤ ` +
        `${TELEMETRY_GOALS.redis}× off. Embedded in memory ${meets(ratio('memory'), TELEMETRY_GOALS.embedded)}, ` +
        `exporting ${meets(ratio('otlp'), TELEMETRY_GOALS.embedded)}; on Redis exporting ` +
        `${meets(redisRatio('otlp'), TELEMETRY_GOALS.redis)}. An embedded echo step does no work ` +
        `(${fixed(offUs)} µs off), and the SDK alone takes ${fixed(floorUs('memory'))} µs (in ` +
        `memory) and ${fixed(floorUs('otlp'))} µs (OTLP) to record what it records: ` +
        `${fixed(floorRatio('memory'), 2)}× and ${fixed(floorRatio('otlp'), 2)}× off before Dirigent does ` +
        'anything' +
        (floorRatio('otlp') > TELEMETRY_GOALS.embedded
          ? `, above the ${TELEMETRY_GOALS.embedded}× goal: embedded, the goal cannot be met with this SDK. `
          : '. ') +
        `Dirigent's part above the floor is ${signed(extra('memory') - floorUs('memory'), 1)} µs ` +
        `(in memory) and ${signed(extra('otlp') - floorUs('otlp'), 1)} µs (OTLP) per step.`,
      `Where the time goes: CPU profiles (V8's sampling profiler, this thread only) of ` +
        `${PROFILE_ROUNDS * PROFILED_RUNS} embedded runs with telemetry off and as many exporting ` +
        `over OTLP, taken in turns. Per step, exporting: ${partsOf(p.otlp)}; off: ${partsOf(p.off)}. ` +
        `Of the code telemetry runs (${fixed(telemetryCode, 2)} µs per step), the SDK's is ` +
        `${fixed((100 * sdkPart) / Math.max(telemetryCode, 1e-9), 0)}% and Dirigent's ` +
        `${fixed((100 * dirigentPart) / Math.max(telemetryCode, 1e-9), 0)}%; garbage collection ` +
        `takes ${signed(gcPart, 2)} µs more per step than off. What bounds an embedded step's ` +
        "telemetry is the SDK's work per span, per histogram point and per exported span, and the " +
        'garbage it leaves; the profiler slows everything alike, so these figures are larger than ' +
        'the timed rows.',
      `On Redis a step costs ${fixed(redisOffUs, 0)} µs with telemetry off, ` +
        `${fixed(redisOffCpu, 0)} µs of it Node CPU: this one process runs the client and both ` +
        'workers, and its CPU, not Redis, sets the pace (see the distributed section). There a step ' +
        `records ${fixed(perStep(redisTally.otlp), 2)} spans: its attempt's, which tells the call ` +
        "it ran in process, and a share of the run's (start, drive, run); a call made as a tool job " +
        "would add the job's span, which tells its runtime call and its queue wait. Exporting adds " +
        `${signed(cpuExtra('otlp'))} µs of Node CPU per step (in memory ${signed(cpuExtra('memory'))}), ` +
        `${fixed((100 * cpuExtra('otlp')) / redisOffUs, 0)}% of a step's wall time; the wall time ` +
        'is the median of ' +
        `${DISTRIBUTED_SIZE.stepReps} runs per round, the Node CPU counts every repetition.`,
    ],
  };
}

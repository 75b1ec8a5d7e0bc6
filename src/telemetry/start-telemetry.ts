/**
 * The OpenTelemetry SDK of a Dirigent process (the CLI, a worker), configured by the standard
 * `OTEL_*` variables alone and off unless they ask for export:
 *
 * - traces go out when `OTEL_TRACES_EXPORTER` names an exporter (`otlp`, `console`, `zipkin`), or
 *   an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT`, `…_TRACES_ENDPOINT`);
 * - metrics when `OTEL_METRICS_EXPORTER` names one (`otlp`, `prometheus`, `console`), an OTLP
 *   endpoint is set, or a Prometheus port is given (`dirigent worker --metrics-port`);
 * - `OTEL_SDK_DISABLED=true` turns everything off.
 *
 * The rest is the SDK's: `OTEL_SERVICE_NAME` (default `dirigent`), `OTEL_EXPORTER_OTLP_PROTOCOL`
 * (`http/protobuf`, `http/json`, `grpc`), `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`, … Off, nothing is
 * loaded (the SDK is imported only when used) and the engine records nothing.
 */
import { dirigentIdGenerator } from './pinned-id-generator.js';
import type { TelemetryOptions } from './telemetry.js';

/** What a process started: the providers to hand to engines and workers, and how to flush them. */
export interface StartedTelemetry {
  /** Undefined when telemetry is off. */
  options: TelemetryOptions | undefined;
  /** Flushes and stops the exporters (at most `timeoutMs`, default 5 s: a dead collector must not hold the exit). */
  shutdown(timeoutMs?: number): Promise<void>;
}

/** Where a worker serves its metrics for Prometheus to scrape. */
export interface PrometheusEndpoint {
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
}

const OFF: StartedTelemetry = { options: undefined, shutdown: () => Promise.resolve() };

/** Which signals the environment asks for (see the module comment). */
export function telemetryWanted(
  env: Record<string, string | undefined>,
  prometheus?: PrometheusEndpoint,
): { traces: boolean; metrics: boolean } {
  if (/^true$/i.test(env.OTEL_SDK_DISABLED?.trim() ?? '')) return { traces: false, metrics: false };
  const set = (name: string) => (env[name]?.trim() ?? '') !== '';
  const endpoint = (signal: string) =>
    set('OTEL_EXPORTER_OTLP_ENDPOINT') || set(`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`);
  const asks = (variable: string, signal: string) =>
    set(variable) ? env[variable]!.trim() !== 'none' : endpoint(signal);
  return {
    traces: asks('OTEL_TRACES_EXPORTER', 'TRACES'),
    metrics: asks('OTEL_METRICS_EXPORTER', 'METRICS') || prometheus !== undefined,
  };
}

/**
 * Starts the SDK when the environment asks for it (see the module comment) and registers its
 * providers globally, as OpenTelemetry expects of an application. Call it before anything else.
 */
export async function startTelemetry(
  options: { prometheus?: PrometheusEndpoint; env?: NodeJS.ProcessEnv } = {},
): Promise<StartedTelemetry> {
  const env = options.env ?? process.env;
  const wanted = telemetryWanted(env, options.prometheus);
  if (!wanted.traces && !wanted.metrics) return OFF;
  if (options.prometheus !== undefined) {
    // The SDK builds its metric readers from the environment: a Prometheus port is one more,
    // beside those the environment asks for (OTLP by default when it names an endpoint).
    const named = env.OTEL_METRICS_EXPORTER?.trim() || 'otlp';
    const readers = telemetryWanted(env).metrics ? named.split(',').map((s) => s.trim()) : [];
    env.OTEL_METRICS_EXPORTER = [...new Set([...readers, 'prometheus'])].join(',');
    env.OTEL_EXPORTER_PROMETHEUS_PORT = String(options.prometheus.port);
    env.OTEL_EXPORTER_PROMETHEUS_HOST = options.prometheus.host ?? '127.0.0.1';
  }
  const [{ NodeSDK }, { diag, metrics, trace }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/api'),
  ]);
  const sdk = new NodeSDK({
    ...(env.OTEL_SERVICE_NAME?.trim() ? {} : { serviceName: 'dirigent' }),
    idGenerator: dirigentIdGenerator,
    instrumentations: [],
    // No logs through OpenTelemetry: log lines carry trace ids instead (telemetry/logger.ts).
    logRecordProcessors: [],
    ...(!wanted.traces && { spanProcessors: [] }),
    ...(!wanted.metrics && { metricReaders: [] }),
  });
  sdk.start();
  let stopped: Promise<void> | undefined;
  return {
    options: {
      ...(wanted.traces && { tracerProvider: trace.getTracerProvider() }),
      ...(wanted.metrics && { meterProvider: metrics.getMeterProvider() }),
      recordValues: /^(1|true)$/i.test(env.DIRIGENT_OTEL_RECORD_VALUES ?? ''),
    },
    shutdown(timeoutMs = 5000) {
      stopped ??= Promise.race([
        // The last spans and metrics did not go out: said through OpenTelemetry's own logger
        // (OTEL_LOG_LEVEL), since the process ends anyway.
        sdk.shutdown().catch((err: unknown) => diag.warn('telemetry shutdown failed', err)),
        new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref()),
      ]);
      return stopped;
    },
  };
}

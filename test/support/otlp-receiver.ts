/**
 * An OTLP/HTTP receiver for tests, on 127.0.0.1: takes the JSON encoding
 * (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) of traces and metrics, as a collector would, and keeps
 * the spans it receives, flattened.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as it arrived. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  status: { code?: number; message?: string };
  /** The resource of the process that sent it (`service.name`, `process.pid`, …). */
  resource: Record<string, unknown>;
}

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}

function valueOf(v: Record<string, unknown>): unknown {
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v)
    return ((v.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
}

/** A running receiver: its endpoint, the spans so far, and how to stop it. */
export interface OtlpReceiver {
  /** For `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Requests to /v1/metrics so far. */
  metricRequests: number;
  close(): Promise<void>;
}

/** Starts a receiver on a free port of 127.0.0.1. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver = { spans: [] as ReceivedSpan[], metricRequests: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans?: {
            resource?: { attributes?: KeyValue[] };
            scopeSpans?: { spans?: Record<string, unknown>[] }[];
          }[];
        };
        for (const rs of body.resourceSpans ?? []) {
          const resource = attributesOf(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              receiver.spans.push({
                traceId: s.traceId as string,
                spanId: s.spanId as string,
                parentSpanId: (s.parentSpanId as string | undefined) || undefined,
                name: s.name as string,
                kind: s.kind as number,
                attributes: attributesOf(s.attributes as KeyValue[]),
                events: ((s.events as { name: string; attributes?: KeyValue[] }[]) ?? []).map(
                  (e) => ({ name: e.name, attributes: attributesOf(e.attributes) }),
                ),
                status: (s.status as ReceivedSpan['status']) ?? {},
                resource,
              });
        }
      } else if (req.url === '/v1/metrics') receiver.metricRequests++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

/** The environment that makes a Dirigent process export to `receiver` at once. */
export function otlpEnv(receiver: OtlpReceiver, service: string): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_SERVICE_NAME: service,
    OTEL_BSP_SCHEDULE_DELAY: '50',
  };
}

/**
 * Telemetry is configured by the standard `OTEL_*` variables alone, off unless they ask for
 * export, and then nothing of OpenTelemetry (or the logger) is even loaded.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { telemetryWanted } from '../../../src/telemetry/start-telemetry.js';
import { REPO_ROOT } from '../../support/paths.js';

describe('telemetryWanted', () => {
  it('is off with no OTEL_* variable', () => {
    expect(telemetryWanted({})).toEqual({ traces: false, metrics: false });
  });

  it('turns traces and metrics on for an OTLP endpoint, and each on its own for its exporter', () => {
    expect(telemetryWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual({
      traces: true,
      metrics: true,
    });
    expect(
      telemetryWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }),
    ).toEqual({ traces: true, metrics: false });
    expect(telemetryWanted({ OTEL_TRACES_EXPORTER: 'console' })).toEqual({
      traces: true,
      metrics: false,
    });
    expect(telemetryWanted({ OTEL_METRICS_EXPORTER: 'prometheus' })).toEqual({
      traces: false,
      metrics: true,
    });
  });

  it('keeps a signal off when its exporter is none, whatever the endpoint', () => {
    expect(
      telemetryWanted({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_METRICS_EXPORTER: 'none',
      }),
    ).toEqual({ traces: true, metrics: false });
  });

  it('turns metrics on for a Prometheus port, and everything off with OTEL_SDK_DISABLED', () => {
    expect(telemetryWanted({}, { port: 9464 })).toEqual({ traces: false, metrics: true });
    expect(
      telemetryWanted({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }, { port: 9464 }),
    ).toEqual({ traces: false, metrics: false });
  });
});

describe('telemetry off', () => {
  it('loads neither OpenTelemetry nor the logger when the CLI runs a directive', () => {
    // A separate process: what the CLI's run command and an embedded run load.
    const script = `
      import { createRequire } from 'node:module';
      const { processTelemetry, startProcessTelemetry } = await import('./dist/src/telemetry/process-telemetry.js');
      await startProcessTelemetry();
      const { runCommand } = await import('./dist/src/cli/run-command.js');
      const code = await runCommand('directives/hello.md', { project: '.', input: ['name=Ada'], json: true, interactive: false });
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => /opentelemetry|pino/.test(f));
      console.log(JSON.stringify({ code, telemetry: processTelemetry() ?? null, loaded }));
    `;
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('OTEL_')) delete env[k];
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env,
    });
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({
      code: 0,
      telemetry: null,
      loaded: [],
    });
  });
});

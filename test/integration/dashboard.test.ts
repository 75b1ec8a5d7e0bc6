/**
 * The Grafana dashboard of docker-compose.yml (deploy/grafana/) charts what a worker exports: a
 * real `dirigent worker --metrics-port` runs tool steps under a `<lock>`, a step that fails after a
 * retry and a step that waits, on the real Redis; then every metric a dashboard query names must
 * be in its /metrics, with the labels the query groups, selects and labels its legend by, and the
 * label values it selects with `=`. The wiring around it is checked too: Prometheus scrapes the
 * port the compose workers serve, and Grafana provisions the data sources the dashboard names.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Metric } from '../../src/telemetry/attributes.js';
import { writeDirective } from '../support/directive-file.js';
import { REPO_ROOT } from '../support/paths.js';
import { redisForTest } from '../support/redis.js';
import { dirigentProcesses, freePort } from '../support/dirigent-processes.js';
import { waitFor } from '../support/wait-for.js';

const DEPLOY = join(REPO_ROOT, 'deploy');
const DASHBOARD_FILE = join(DEPLOY, 'grafana', 'dashboards', 'dirigent.json');

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
}
interface Target {
  expr?: string;
  legendFormat?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  title?: string;
  type: string;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  panels?: Panel[];
}
interface Dashboard {
  panels: Panel[];
  templating?: {
    list: { name: string; definition?: string; query?: string | { query: string } }[];
  };
}
interface Datasource {
  name: string;
  uid: string;
  type: string;
  url: string;
}

const compose = parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, Service>;
};
const prometheusConfig = parse(
  readFileSync(join(DEPLOY, 'prometheus', 'prometheus.yml'), 'utf8'),
) as {
  scrape_configs: {
    job_name: string;
    dns_sd_configs?: { names: string[]; type: string; port: number }[];
  }[];
};
const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;

/** Every YAML file of a provisioning folder of deploy/grafana/, parsed. */
function provisioning<T>(kind: 'datasources' | 'dashboards'): T[] {
  const dir = join(DEPLOY, 'grafana', 'provisioning', kind);
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => parse(readFileSync(join(dir, f), 'utf8')) as T);
}

/** The value after `flag` in a command. */
function argAfter(command: string[], flag: string): string | undefined {
  const i = command.indexOf(flag);
  return i < 0 ? undefined : command[i + 1];
}

/** Where compose mounts a folder or file of this repository in a service: container path → host path. */
function mounts(service: Service): Map<string, string> {
  const m = new Map<string, string>();
  for (const v of service.volumes ?? []) {
    const [source, target] = v.split(':') as [string, string];
    if (source.startsWith('./')) m.set(target, resolve(REPO_ROOT, source));
  }
  return m;
}

/** The file of this repository a container sees at `path`, through the service's mounts. */
function hostPath(service: Service, path: string): string | undefined {
  for (const [target, host] of mounts(service))
    if (path === target || path.startsWith(`${target}/`))
      return join(host, path.slice(target.length));
  return undefined;
}

// ---- the dashboard's queries ----

/** What one query (a panel target or a variable's query) asks of the scrape. */
interface Query {
  where: string;
  expr: string;
  /** The metric names it reads (every `dirigent_…` identifier that is not a label). */
  metrics: Set<string>;
  /** Label names it selects, groups or names in its legend. */
  labels: Set<string>;
  /** Its `label="value"` matchers, each with the metric it selects. */
  equals: { metric: string; label: string; value: string }[];
}

const GROUPING = /\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g;
const SELECTOR = /([a-zA-Z_:][\w:]*)?\s*\{([^}]*)\}/g;
const MATCHER = /([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g;

/**
 * Reads a PromQL expression as far as the dashboard needs: label names in selectors, grouping
 * clauses and the legend are labels; every other `dirigent_…` identifier names a metric.
 */
function readQuery(where: string, expr: string, legend = ''): Query {
  const q: Query = { where, expr, metrics: new Set(), labels: new Set(), equals: [] };
  let rest = expr.replace(GROUPING, (_, list: string) => {
    for (const l of list.split(',').map((s) => s.trim())) if (l) q.labels.add(l);
    return ' ';
  });
  rest = rest.replace(SELECTOR, (_, metric: string | undefined, body: string) => {
    for (const [, label, op, value] of body.matchAll(MATCHER)) {
      q.labels.add(label!);
      if (op === '=' && metric && !value!.includes('$'))
        q.equals.push({ metric, label: label!, value: value! });
    }
    return ` ${metric ?? ''} `;
  });
  rest = rest.replace(/\[[^\]]*\]/g, ' ');
  for (const [id] of rest.matchAll(/[a-zA-Z_:][\w:]*/g))
    if (id.startsWith('dirigent_')) q.metrics.add(id);
  for (const [, label] of legend.matchAll(/\{\{\s*(\w+)\s*\}\}/g)) q.labels.add(label!);
  return q;
}

/** Every query of the dashboard: its panels' targets and its variables' `label_values(…)`. */
function dashboardQueries(d: Dashboard): Query[] {
  const queries: Query[] = [];
  const visit = (panels: Panel[]) => {
    for (const p of panels) {
      for (const [i, t] of (p.targets ?? []).entries())
        if (t.expr) queries.push(readQuery(`"${p.title}" #${i + 1}`, t.expr, t.legendFormat));
      visit(p.panels ?? []);
    }
  };
  visit(d.panels);
  for (const v of d.templating?.list ?? []) {
    const text = typeof v.query === 'string' ? v.query : (v.query?.query ?? v.definition ?? '');
    const m = /^\s*label_values\((.*),\s*(\w+)\s*\)\s*$/.exec(text);
    const q = readQuery(`variable $${v.name}`, m ? m[1]! : text);
    if (m) q.labels.add(m[2]!);
    queries.push(q);
  }
  return queries;
}

/** Every data source uid the dashboard names, with its type. */
function datasourceRefs(node: unknown, found = new Map<string, string | undefined>()) {
  if (Array.isArray(node)) for (const n of node) datasourceRefs(n, found);
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'datasource' && value && typeof value === 'object' && 'uid' in value)
        found.set(String(value.uid), (value as { type?: string }).type);
      else datasourceRefs(value, found);
    }
  }
  return found;
}

// ---- the worker's scrape ----

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition. */
function parseScrape(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

const redis = redisForTest();
let project: string;
const processes = dirigentProcesses();

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-dashboard-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

const env = () => ({ ...process.env, REDIS_URL: redis.url, DIRIGENT_PREFIX: redis.prefix });

/** `dirigent worker` serving metrics on 127.0.0.1:`port`, once it takes jobs. */
function startWorker(port: number): Promise<ChildProcess> {
  return processes.worker(env(), '--metrics-port', String(port), '--metrics-host', '127.0.0.1');
}

/** `dirigent run <file> --json` against the worker: its exit status and the run's status. */
async function run(
  file: string,
  ...args: string[]
): Promise<{ code: number | null; status?: string }> {
  const r = await processes.cli(env(), 'run', file, ...args, '--json', '--project', project);
  let status: string | undefined;
  try {
    status = (JSON.parse(r.stdout) as { status: string }).status;
  } catch {
    status = undefined;
  }
  // An unexpected status shows what the CLI said.
  if (status === 'invalid' || status === undefined) console.error(r.stdout, r.stderr);
  return { code: r.code, ...(status !== undefined && { status }) };
}

const bash = (command: string) =>
  `<execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command}"/></execute>`;

describe('the Grafana dashboard', { timeout: 60_000 }, () => {
  const queries = dashboardQueries(dashboard);

  it('has queries to check, each naming a dirigent metric', () => {
    expect(queries.length).toBeGreaterThan(10);
    for (const q of queries) expect(q.metrics.size, `${q.where}: ${q.expr}`).toBeGreaterThan(0);
  });

  it('queries only metrics, labels and label values a worker exports', async () => {
    const port = await freePort();
    const worker = await startWorker(port);
    try {
      // A completed run: tool steps, a foreach under a <lock> (lock wait), queue waits.
      const work = writeDirective(
        project,
        'work',
        `<process><step name="greet">${bash('echo hello')}</step><step name="each"><lock key="k" limit="1"/><foreach over="\${inputs.items}" as="n" parallel="2">${bash('echo ${n}')}</foreach></step></process><inputs><input name="items" type="array"/></inputs>`,
      );
      // A failed run: one attempt retried, the last failed, with the error's code.
      const fails = writeDirective(
        project,
        'fails',
        `<process><step name="boom"><retry attempts="2" backoff="fixed" delay_ms="20"/>${bash('exit 3')}</step></process>`,
      );
      // A waiting run (dirigent.run.count, status waiting).
      const waits = writeDirective(
        project,
        'waits',
        `<process><step name="hold"><wait signal="go"/></step></process>`,
      );
      expect(await run(work, '--inputs', '{"items":[1,2,3]}')).toEqual({
        code: 0,
        status: 'completed',
      });
      expect(await run(fails)).toEqual({ code: 1, status: 'failed' });
      expect(await run(waits)).toEqual({ code: 3, status: 'waiting' });

      // The worker records a run's metrics as it ends it, maybe just after the CLI has its result:
      // scrape until every metric and selected label value is there (or 10 s have passed).
      const wanted = new Set(queries.flatMap((q) => [...q.metrics]));
      const selected = queries.flatMap((q) => q.equals);
      const complete = (samples: Sample[]) =>
        [...wanted].every((m) => samples.some((s) => s.name === m)) &&
        selected.every((e) =>
          samples.some((s) => s.name === e.metric && s.labels[e.label] === e.value),
        );
      const url = `http://127.0.0.1:${port}/metrics`;
      let samples: Sample[] = [];
      await waitFor(
        async () => {
          const res = await fetch(url);
          expect(res.status).toBe(200);
          samples = parseScrape(await res.text());
          return complete(samples);
        },
        { what: 'every metric and selected label value', timeoutMs: 10_000, intervalMs: 200 },
      ).catch(() => undefined); // the assertions below say what is missing
      const exported = new Set(samples.map((s) => s.name));

      // Every metric family of attributes.ts has samples: the runs above reach every one.
      const families = Object.values(Metric).map((m) => m.replaceAll('.', '_'));
      const silent = families.filter(
        (f) => ![f, `${f}_total`, `${f}_bucket`].some((n) => exported.has(n)),
      );
      expect(silent, 'metric families without samples').toEqual([]);

      for (const q of queries) {
        const missing = [...q.metrics].filter((m) => !exported.has(m));
        expect(missing, `${q.where} names metrics the worker does not export: ${q.expr}`).toEqual(
          [],
        );
        const series = samples.filter((s) => q.metrics.has(s.name));
        const labels = new Set(series.flatMap((s) => Object.keys(s.labels)));
        const unknown = [...q.labels].filter((l) => !labels.has(l));
        expect(unknown, `${q.where} uses labels its metrics lack: ${q.expr}`).toEqual([]);
        for (const { metric, label, value } of q.equals)
          expect(
            samples.some((s) => s.name === metric && s.labels[label] === value),
            `${q.where}: no ${metric}{${label}="${value}"} in the scrape`,
          ).toBe(true);
      }

      // The gauges read this deployment's Redis: one run waits.
      const waiting = samples.find(
        (s) => s.name === 'dirigent_run_count' && s.labels.dirigent_run_status === 'waiting',
      );
      expect(waiting?.value).toBe(1);
    } finally {
      const exited = new Promise<number | null>((r) => worker.once('exit', r));
      worker.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});

describe('the telemetry services of docker-compose.yml', () => {
  const worker = compose.services.worker!;

  it("has Prometheus scrape every worker replica on the port the workers' command serves", () => {
    const port = argAfter(worker.command!, '--metrics-port');
    expect(port).toMatch(/^\d+$/);
    expect(argAfter(worker.command!, '--metrics-host'), 'reachable over the compose network').toBe(
      '0.0.0.0',
    );
    const jobs = prometheusConfig.scrape_configs.filter((j) => j.dns_sd_configs !== undefined);
    expect(jobs.length).toBeGreaterThan(0);
    for (const sd of jobs.flatMap((j) => j.dns_sd_configs!)) {
      expect(sd.port).toBe(Number(port));
      expect(sd.type).toBe('A');
      // `worker` (compose) and `tasks.worker` (Swarm) list the containers of the worker service.
      for (const name of sd.names) expect(name.replace(/^tasks\./, '')).toBe('worker');
    }
    expect(hostPath(compose.services.prometheus!, '/etc/prometheus/prometheus.yml')).toBe(
      join(DEPLOY, 'prometheus', 'prometheus.yml'),
    );
  });

  it('provisions the data sources the dashboard names, at compose services', () => {
    const provisioned = provisioning<{ datasources: Datasource[] }>('datasources').flatMap(
      (f) => f.datasources,
    );
    const refs = datasourceRefs(dashboard);
    expect(refs.size).toBeGreaterThan(0);
    for (const [uid, type] of refs) {
      const ds = provisioned.find((d) => d.uid === uid);
      expect(ds, `data source ${uid}`).toBeDefined();
      if (type !== undefined) expect(ds!.type).toBe(type);
    }
    expect(provisioned.map((d) => d.type).sort()).toEqual(['jaeger', 'prometheus']);
    for (const ds of provisioned) {
      const host = new URL(ds.url).hostname;
      expect(compose.services[host], `${ds.name} at ${ds.url}`).toBeDefined();
    }
  });

  it("loads the dashboard from where compose mounts it, and sends the workers' spans to Jaeger", () => {
    const grafana = compose.services.grafana!;
    for (const host of mounts(grafana).values()) expect(existsSync(host), host).toBe(true);
    const paths = provisioning<{ providers: { options: { path: string } }[] }>(
      'dashboards',
    ).flatMap((f) => f.providers.map((p) => p.options.path));
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths)
      expect(hostPath(grafana, path), `dashboards folder ${path}`).toBe(
        join(DEPLOY, 'grafana', 'dashboards'),
      );
    const home = grafana.environment!.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH!;
    expect(hostPath(grafana, home), 'home dashboard').toBe(DASHBOARD_FILE);
    expect(grafana.environment!.GF_AUTH_ANONYMOUS_ENABLED).toBe('true');
    expect(grafana.environment!.GF_AUTH_ANONYMOUS_ORG_ROLE).toBe('Viewer');

    const otel = worker.environment!;
    expect(otel.OTEL_METRICS_EXPORTER, 'metrics are pulled by Prometheus').toBe('none');
    expect(otel.OTEL_TRACES_EXPORTER).toBe('otlp');
    const endpoint = new URL(otel.OTEL_EXPORTER_OTLP_ENDPOINT!);
    expect(compose.services[endpoint.hostname]?.image).toMatch(/^jaegertracing\//);
    expect(endpoint.port, 'OTLP over HTTP').toBe('4318');
  });
});

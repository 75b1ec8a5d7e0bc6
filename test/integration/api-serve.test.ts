/**
 * `dirigent serve` as a real process: it refuses to start without a token unless told
 * `--no-auth` (and then warns), reads tokens from a file, runs embedded with no Redis or on
 * Redis workers, and on SIGTERM ends its event streams and exits 0.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiClient, apiServers, openEvents, TOKEN } from '../support/api-server.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentProcesses, freePort } from '../support/dirigent-processes.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();
const processes = dirigentProcesses();
const servers = apiServers();

/** The environment of an embedded server: no Redis, no tokens unless given. */
function embeddedEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.REDIS_URL;
  if (extra.DIRIGENT_API_TOKENS === undefined) delete env.DIRIGENT_API_TOKENS;
  return env;
}

describe('dirigent serve', { timeout: 60_000 }, () => {
  it('refuses to start with authentication on and no token (exit 2)', async () => {
    const r = await servers.serveExit(embeddedEnv(), '--port', '0', '--project', servers.project());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/DIRIGENT_API_TOKENS/);
    expect(r.stderr).toMatch(/--tokens-file/);
    expect(r.stderr).toMatch(/--no-auth/);
    const bad = await servers.serveExit(
      embeddedEnv({ DIRIGENT_API_TOKENS: TOKEN }),
      '--port',
      'http',
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--port/);
  });

  it('reads tokens from a file, skipping comments', async () => {
    const project = servers.project();
    const file = join(project, 'tokens');
    writeFileSync(
      file,
      `# the ops team\nfile-token-0123456789abcdef\n\n# old-token-0123456789abcdef\n`,
    );
    const port = await freePort();
    const { url } = await servers.serve(
      embeddedEnv(),
      '--port',
      String(port),
      '--project',
      project,
      '--tokens-file',
      file,
    );
    expect(url).toBe(`http://127.0.0.1:${port}`);
    expect((await apiClient(url, 'file-token-0123456789abcdef').get('/v1/runs')).status).toBe(200);
    expect((await apiClient(url, 'old-token-0123456789abcdef').get('/v1/runs')).status).toBe(401);
    expect((await apiClient(url, null).get('/v1/runs')).status).toBe(401);
  });

  it('runs embedded with no Redis, warns with --no-auth, and exits 0 on SIGTERM, ending its streams', async () => {
    const project = servers.project();
    const { url, child, stderr } = await servers.serve(
      embeddedEnv(),
      '--port',
      '0',
      '--project',
      project,
      '--no-auth',
    );
    expect(stderr()).toMatch(/warning: authentication is off/);
    expect(stderr()).toMatch(/runs embedded/);
    const api = apiClient(url, null);
    const done = await api.post('/v1/runs?wait=20', { directive: 'hello', inputs: { who: 'Ada' } });
    expect(done.status).toBe(201);
    expect(done.body).toMatchObject({ status: 'completed', outputs: { said: 'Hello Ada' } });
    expect((await api.get('/readyz')).body).toMatchObject({ ready: true, mode: 'embedded' });

    const gate = await api.post('/v1/runs?wait=20', { directive: 'gate' });
    expect(gate.body.status).toBe('waiting');
    const stream = await openEvents(`${url}/v1/runs/${gate.body.runId}/events`);
    expect(stream.response.status).toBe(200);
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    await stream.ended;
    expect(stream.events.map((e) => e.event)).toEqual(['run.state']);
    expect(await exited).toBe(0);
    // The waiting run lives on in the project: another server takes it up.
    const again = await servers.serve(
      embeddedEnv(),
      '--port',
      '0',
      '--project',
      project,
      '--no-auth',
    );
    const resumed = await apiClient(again.url, null).post(
      `/v1/runs/${gate.body.runId}/signals/go`,
      { payload: 'later' },
    );
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'completed', outputs: { got: 'later' } });
  });

  it('answers /healthz within 100 ms while runs meet a catastrophic regular expression', async () => {
    const project = servers.project();
    writeDirective(
      join(project, '.ai', 'directives'),
      'backtrack',
      `<inputs><input name="x" type="string" required="true"/></inputs>
  <process><step name="check"><render>checked</render>
    <assign name="full" expr="$contains(inputs.x, /^(a+)+$/)"/></step></process>
  <outputs><output name="full" value="\${state.full}"/></outputs>`,
    );
    const { url } = await servers.serve(
      embeddedEnv(),
      '--port',
      '0',
      '--project',
      project,
      '--no-auth',
    );
    const api = apiClient(url, null);
    // 28 a's and a b hold a backtracking engine for seconds per run; RE2 takes microseconds.
    const inputs = { x: `${'a'.repeat(28)}b` };
    const runs = Promise.all(
      Array.from({ length: 4 }, () =>
        api.post('/v1/runs?wait=20', { directive: 'backtrack', inputs }),
      ),
    );
    let done = false;
    void runs.finally(() => (done = true));
    // Asked over and over until the runs are done: a backtracking engine would hold one answer
    // for all the runs' seconds.
    const latencies: number[] = [];
    while (!done || latencies.length < 4) {
      const started = performance.now();
      expect((await api.get('/healthz')).status).toBe(200);
      latencies.push(performance.now() - started);
    }
    for (const run of await runs)
      expect(run.body).toMatchObject({ status: 'completed', outputs: { full: false } });
    expect(Math.max(...latencies), latencies.map(Math.round).join(', ')).toBeLessThan(100);
  });

  it('serves a Redis deployment with its workers', async () => {
    const project = servers.project();
    const env = {
      ...process.env,
      REDIS_URL: redis.url,
      DIRIGENT_PREFIX: redis.prefix,
      DIRIGENT_API_TOKENS: `${TOKEN},another-token-0123456789`,
    };
    await processes.worker(env, '--project', project);
    const { url, stderr } = await servers.serve(env, '--port', '0', '--project', project);
    expect(stderr()).toMatch(/runs on Redis workers/);
    expect(stderr()).toMatch(/2 tokens/);
    const api = apiClient(url);
    expect((await api.get('/readyz')).status).toBe(200);
    const done = await api.post('/v1/runs?wait=20', { directive: 'hello', inputs: { who: 'Bo' } });
    expect(done.status).toBe(201);
    expect(done.body).toMatchObject({ status: 'completed', outputs: { said: 'Hello Bo' } });
    const listed = await api.get('/v1/runs');
    expect(listed.body.runs.map((r: { runId: string }) => r.runId)).toEqual([done.body.runId]);
  });

  it('exits 1 when the Redis it is given does not answer', async () => {
    const port = await freePort();
    const r = await servers.serveExit(
      { ...embeddedEnv({ DIRIGENT_API_TOKENS: TOKEN }), REDIS_URL: `redis://127.0.0.1:${port}` },
      '--port',
      '0',
      '--project',
      servers.project(),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/REDIS_UNAVAILABLE/);
  });
});

/**
 * `dirigent batch` end to end: a 1,000-line batch on Redis whose CLI is killed with SIGKILL half
 * way and run again runs every input exactly once and writes 1,000 results; embedded, a CSV batch
 * with a header map, bad lines reported while the rest run, plain progress lines without a
 * terminal, a detached batch and its status.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeDirective } from '../support/directive-file.js';
import { dirigentProcesses, until } from '../support/dirigent-processes.js';
import { CLI_MAIN, DIRECTIVES } from '../support/paths.js';
import { redisForTest } from '../support/redis.js';

const redis = redisForTest();
const processes = dirigentProcesses();
let project: string;

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-batch-'));
  const dir = join(project, '.ai', 'directives');
  mkdirSync(dir, { recursive: true });
  // Each run appends its input to ran.log: the side effect counted.
  writeDirective(
    dir,
    'greet',
    `<inputs><input name="name" type="string" required="true"/><input name="times" type="integer" default="1"/></inputs>
    <process><step name="say"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo {input:name} >> ran.log; echo 'Hi {input:name} x{input:times}'"/></execute></step></process>
    <outputs><output name="said" expr="$trim(steps.say.result.stdout)"/></outputs>`,
  );
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

const lines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
const results = (file: string) =>
  lines(file).map(
    (l) =>
      JSON.parse(l) as {
        line: number;
        status: string;
        error?: { code: string };
        outputs?: { said: string };
      },
  );

describe('dirigent batch', { timeout: 120_000 }, () => {
  it('runs every input of a 1,000-line batch exactly once when its CLI is killed half way and run again (Redis)', async () => {
    const env = { ...process.env, REDIS_URL: redis.url, DIRIGENT_PREFIX: redis.prefix };
    await processes.worker(env, '--project', project, '--concurrency', '16');
    const inputs = join(project, 'people.jsonl');
    writeFileSync(
      inputs,
      Array.from({ length: 1000 }, (_, i) => JSON.stringify({ name: `p${i + 1}` })).join('\n') +
        '\n',
    );
    const out = join(project, 'results.jsonl');
    const args = [
      CLI_MAIN,
      'batch',
      'greet',
      '--inputs',
      inputs,
      '--out',
      out,
      '--concurrency',
      '16',
      '--project',
      project,
    ];
    const first = spawn(process.execPath, args, { env, stdio: 'ignore' });
    await until(() => lines(out).length >= 500, 60_000, 'half of the results');
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const cut = lines(out).length;
    expect(cut).toBeLessThan(1000);
    const again = await processes.cli(env, ...args.slice(1), '--json');
    expect(again.code, again.stderr).toBe(0);
    const summary = JSON.parse(again.stdout) as { counts: { skipped: number; completed: number } };
    expect(summary.counts.skipped).toBeGreaterThanOrEqual(cut - 1);
    // Every input has a result, and ran exactly once: runs under way when the CLI died went on on
    // the worker and were waited for, not started again.
    const byLine = new Map(results(out).map((r) => [r.line, r]));
    expect(byLine.size).toBe(1000);
    expect([...byLine.values()].every((r) => r.status === 'completed')).toBe(true);
    expect(byLine.get(777)!.outputs).toEqual({ said: 'Hi p777 x1' });
    const ran = lines(join(project, 'ran.log'));
    expect(ran).toHaveLength(1000);
    expect(new Set(ran).size).toBe(1000);
  });

  it('reads a CSV with a header map, reports bad lines and runs the rest, with plain progress lines', async () => {
    const inputs = join(project, 'people.csv');
    writeFileSync(
      inputs,
      'Full Name,Count\n"Lovelace, Ada",2\nGrace,x\nAlan,3\n"broken,1\nLinus,1\n',
    );
    const out = join(project, 'out.jsonl');
    const r = await processes.cli(
      { ...process.env, REDIS_URL: '' },
      'batch',
      'greet',
      '--inputs',
      inputs,
      '--map',
      'Full Name=name,Count=times',
      '--out',
      out,
      '--progress-every',
      '0.05',
      '--project',
      project,
    );
    expect(r.code).toBe(1); // some inputs failed
    const got = results(out);
    expect(got.map((x) => [x.line, x.status])).toEqual([
      [2, 'completed'],
      [3, 'invalid'],
      [4, 'completed'],
      [5, 'invalid'],
    ]);
    expect(got[0]!.outputs).toEqual({ said: 'Hi Lovelace, Ada x2' });
    expect(got[1]!.error!.code).toBe('INVALID_INPUTS');
    expect(r.stderr).toMatch(/batch: \d+ done \(\d+ completed, \d+ failed\)/);
    expect(r.stderr).toContain('Most frequent errors');
    expect(lines(join(project, 'ran.log')).sort()).toEqual(['Alan', 'Lovelace, Ada']);
  });

  it('retries failed inputs alone, and says 0 once all completed', async () => {
    const inputs = join(project, 'in.jsonl');
    writeFileSync(inputs, '{"name":"a"}\n{"name":"b","times":"x"}\n');
    const out = join(project, 'out.jsonl');
    const env = { ...process.env, REDIS_URL: '' };
    const base = [
      'batch',
      'greet',
      '--inputs',
      inputs,
      '--out',
      out,
      '--project',
      project,
      '--id',
      'retry-me',
    ];
    expect((await processes.cli(env, ...base)).code).toBe(1);
    // The input is fixed in place: another attempt with --retry-failed runs only it.
    writeFileSync(inputs, '{"name":"a"}\n{"name":"b","times":2}\n');
    const retried = await processes.cli(env, ...base, '--retry-failed', '--json');
    expect(retried.code, retried.stdout + retried.stderr).toBe(0);
    expect(JSON.parse(retried.stdout).counts).toMatchObject({ skipped: 1, completed: 1 });
    expect(lines(join(project, 'ran.log'))).toEqual(['a', 'b']);
  });

  it('goes on detached, and tells its status', async () => {
    const inputs = join(project, 'in.jsonl');
    writeFileSync(inputs, Array.from({ length: 20 }, (_, i) => `{"name":"d${i}"}`).join('\n'));
    const env = { ...process.env, REDIS_URL: '' };
    const started = await processes.cli(
      env,
      'batch',
      'greet',
      '--inputs',
      inputs,
      '--detach',
      '--json',
      '--project',
      project,
    );
    expect(started.code, started.stderr).toBe(0);
    const { batchId } = JSON.parse(started.stdout) as { batchId: string };
    await until(
      () => lines(join(project, '.dirigent', 'batches', batchId, 'results.jsonl')).length === 20,
      30_000,
      'the detached batch',
    );
    await until(
      () =>
        JSON.parse(
          readFileSync(join(project, '.dirigent', 'batches', batchId, 'batch.json'), 'utf8'),
        ).state === 'finished',
      10_000,
      'the batch to finish',
    );
    const status = await processes.cli(
      env,
      'batch',
      'status',
      batchId,
      '--json',
      '--project',
      project,
    );
    expect(JSON.parse(status.stdout)).toMatchObject({
      batchId,
      state: 'finished',
      results: { done: 20, failed: 0 },
    });
  });

  it('refuses to start what it cannot run: exit 2, nothing written', async () => {
    const env = { ...process.env, REDIS_URL: '' };
    const missing = await processes.cli(
      env,
      'batch',
      'greet',
      '--inputs',
      join(project, 'nope.jsonl'),
      '--project',
      project,
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('FILE_NOT_FOUND');
    writeFileSync(join(project, 'in.jsonl'), '{"name":"a"}\n');
    const unknown = await processes.cli(
      env,
      'batch',
      'nope',
      '--inputs',
      join(project, 'in.jsonl'),
      '--project',
      project,
    );
    expect(unknown.code).toBe(2);
    expect(existsSync(join(project, '.dirigent', 'batches'))).toBe(false);
  });

  it("runs the README's example: hello.md over directives/people.jsonl", async () => {
    const out = join(project, 'results.jsonl');
    const r = await processes.cli(
      { ...process.env, REDIS_URL: '' },
      'batch',
      join(DIRECTIVES, 'hello.md'),
      '--inputs',
      join(DIRECTIVES, 'people.jsonl'),
      '--out',
      out,
      '--project',
      project,
    );
    expect(r.code).toBe(0);
    expect(results(out).map((x) => x.outputs)).toEqual(
      ['Ada', 'Grace', 'Alan', 'Barbara', 'Linus'].map((n) => ({ greeting: `Hello, ${n}!` })),
    );
  });
});

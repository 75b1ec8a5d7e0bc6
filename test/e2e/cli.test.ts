/**
 * End to end: the compiled CLI (`dist/src/cli/main.js`) in real processes, each test in a fresh
 * temporary project (`--project`). Waiting runs are kept in `<project>/.dirigent/runs/` and
 * resumed from a second process with `dirigent signal`.
 */
import { execSync, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLI_MAIN, DIRECTIVES, REPO_ROOT as ROOT } from '../support/paths.js';
import { redisForTest } from '../support/redis.js';

const example = (name: string) => join(DIRECTIVES, `${name}.md`);

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A run record as `--json` prints it (DIRECTIVES.md, "Run outcome"). */
interface Record_ {
  runId: string | null;
  directive: string | null;
  status: string;
  outputs: Record<string, unknown> | null;
  steps: {
    name: string;
    status: string;
    attempts: number;
    durationMs: number;
    error?: { code: string; message: string };
  }[];
  error: { code: string; message: string; step: string | null } | null;
  waiting?: { step: string; signal: string; text?: string; answer?: unknown }[];
  startedAt?: number;
  endedAt?: number | null;
  tags?: Record<string, string>;
}

let userSpace: string;
let project: string;

/** Runs the CLI with `args` in the test's project; stdin is closed (not a terminal). */
function cli(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<Result> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI_MAIN, ...args], {
      cwd: options.cwd ?? project,
      env: { ...process.env, DIRIGENT_USER_SPACE: userSpace, NO_COLOR: '1', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

/** `cli` with `--project` and `--json`; parses the one JSON object printed. */
async function json(
  args: string[],
  options: { env?: Record<string, string> } = {},
): Promise<Result & { record: Record_ }> {
  const r = await cli([...args, '--project', project, '--json'], options);
  let record: Record_;
  try {
    record = JSON.parse(r.stdout) as Record_;
  } catch {
    throw new Error(
      `stdout is not one JSON object (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`,
    );
  }
  return { ...r, record };
}

async function storedRecord(runId: string): Promise<Record_> {
  const stored = JSON.parse(
    await readFile(join(project, '.dirigent', 'runs', `${runId}.json`), 'utf8'),
  ) as { record: Record_ };
  return stored.record;
}

/** Writes a directive into the project and returns its path. Its body starts on line 9. */
async function directive(
  name: string,
  body: string,
  extra: { inputs?: string; outputs?: string } = {},
): Promise<string> {
  const file = join(project, `${name}.md`);
  const text = [
    `# ${name}`,
    '',
    'A directive written by a test.',
    '',
    '```xml',
    `<directive name="${name}" version="1.0.0">`,
    `  <inputs>${extra.inputs ?? ''}</inputs>`,
    '  <process>',
    body,
    '  </process>',
    `  <outputs>${extra.outputs ?? ''}</outputs>`,
    '</directive>',
    '```',
    '',
  ].join('\n');
  await writeFile(file, text);
  return file;
}

beforeAll(async () => {
  if (!existsSync(CLI_MAIN)) execSync('npm run build', { cwd: ROOT, stdio: 'inherit' });
  userSpace = await mkdtemp(join(tmpdir(), 'dirigent-e2e-user-'));
}, 120_000);
afterAll(async () => {
  await rm(userSpace, { recursive: true, force: true });
});
beforeEach(async () => {
  project = await mkdtemp(join(tmpdir(), 'dirigent-e2e-'));
});
afterEach(async () => {
  await rm(project, { recursive: true, force: true });
});

describe('dirigent run --json: the run record and the exit status', () => {
  it('prints the record of a completed run and exits 0', async () => {
    const { code, record, stderr } = await json(['run', example('hello'), '--input', 'name=Ada']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(record).toMatchObject({
      runId: expect.stringMatching(/^[\w-]{8,}$/),
      directive: 'hello',
      status: 'completed',
      outputs: { greeting: 'Hello, Ada!' },
      steps: [{ name: 'greet', status: 'completed', attempts: 1, durationMs: expect.any(Number) }],
      error: null,
    });
  });

  it('exits 1 for a failing run and names the failing step', async () => {
    const { code, record } = await json([
      'run',
      example('retry_and_recover'),
      '--input',
      'failures=9',
    ]);
    expect(code).toBe(1);
    expect(record.status).toBe('failed');
    expect(record.outputs).toBeNull();
    expect(record.steps.map((s) => [s.name, s.status, s.attempts])).toEqual([
      ['scratch', 'completed', 1],
      ['prepare', 'completed', 1],
      ['flaky', 'failed', 4],
    ]);
    expect(record.error).toMatchObject({
      code: 'COMMAND_FAILED',
      step: 'flaky',
      message: expect.stringContaining('attempt 4: not yet'),
    });
  });

  it('exits 2 for an invalid directive, reporting every error with its location; nothing runs', async () => {
    const file = await directive(
      'bad',
      `    <step name="one">
      <execute item_type="tool" item_id="dirigent/shell/bash">
        <parm name="command" value="touch ran"/>
      </execute>
      <next to="nowhere"/>
    </step>`,
    );
    const { code, record } = await json(['run', file]);
    expect(code).toBe(2);
    expect(record).toMatchObject({ runId: null, status: 'invalid', steps: [] });
    const diagnostics = (
      record.error as unknown as {
        diagnostics: { code: string; loc: { line: number; column: number } }[];
      }
    ).diagnostics;
    expect(diagnostics.map((d) => [d.code, d.loc.line])).toEqual([
      ['UNKNOWN_ELEMENT', 11],
      ['UNKNOWN_STEP', 13],
    ]);
    expect(existsSync(join(project, 'ran'))).toBe(false);
  });

  it('exits 2 for XML that is not well-formed', async () => {
    const file = await directive('broken', '    <step name="one">\n      <render>hi</render>\n');
    const { code, stderr } = await cli(['run', file, '--project', project]);
    expect(code).toBe(2);
    expect(stderr).toMatch(new RegExp(`${escape(file)}:\\d+:\\d+: error: .*\\[XML_SYNTAX\\]`));
  });

  it('exits 2 for invalid inputs, reporting all problems together', async () => {
    const { code, record } = await json([
      'run',
      example('greet_child'),
      '--input',
      'excited=maybe',
      '--input',
      'nme=Ada',
    ]);
    expect(code).toBe(2);
    expect(record.status).toBe('invalid');
    expect(record.error?.code).toBe('INVALID_INPUTS');
    expect(record.error?.message).toContain('"excited" must be a boolean');
    expect(record.error?.message).toContain('missing required input "name"');
    expect(record.error?.message).toContain('unknown input "nme"');
  });

  it('exits 2 for a directive that does not exist, and for --inputs that are not JSON', async () => {
    expect((await cli(['run', 'no/such/directive', '--project', project])).code).toBe(2);
    const r = await cli(['run', example('hello'), '--inputs', '{name:', '--project', project]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--inputs is not valid JSON');
  });

  it('exits 3 for a waiting run, which is kept in <project>/.dirigent/runs/', async () => {
    const { code, record } = await json([
      'run',
      example('wait_for_signal'),
      '--input',
      'version=2.0.0',
    ]);
    expect(code).toBe(3);
    expect(record).toMatchObject({
      directive: 'wait_for_signal',
      status: 'waiting',
      outputs: null,
      error: null,
    });
    expect(record.steps.map((s) => [s.name, s.status])).toEqual([['draft', 'completed']]);
    expect(record.waiting).toMatchObject([
      {
        step: 'review',
        signal: 'review',
        text: expect.stringContaining('Release notes for v2.0.0'),
      },
    ]);
    expect(await storedRecord(record.runId!)).toMatchObject({
      status: 'waiting',
      waiting: [{ signal: 'review' }],
    });
  });

  it('runs every example through the CLI without getting stuck, with the exit status its outcome calls for', async () => {
    // tidy_notes fetches a page: the scratch project opens no host, so its fetch is refused.
    const expected: Record<string, number> = {
      wait_for_signal: 3,
      saga_with_approval: 3,
      tidy_notes: 1,
    };
    const inputs: Record<string, string[]> = { greet_child: ['--input', 'name=Ada'] };
    const names = readdirSync(DIRECTIVES)
      .filter((f) => f.endsWith('.md'))
      .map((f) => f.slice(0, -3));
    // The example tools live in the repository's .ai; the runs' project is a scratch folder,
    // which allows the one variable an example reads as the repository's configuration does.
    const env = {
      DIRIGENT_USER_SPACE: join(DIRECTIVES, '..', '.ai'),
      DIRIGENT_ENV_ALLOW: 'DIRIGENT_EXAMPLE_CURRENCY,DIRIGENT_EXAMPLE_SITE',
      DIRIGENT_EXAMPLE_SITE: 'http://127.0.0.1:9',
    };
    const results = await Promise.all(
      names.map((n) => json(['run', example(n), ...(inputs[n] ?? [])], { env })),
    );
    results.forEach(({ code, record }, i) => {
      const name = names[i]!;
      expect({ name, code }).toEqual({ name, code: expected[name] ?? 0 });
      if (name === 'tidy_notes')
        expect(record.error).toMatchObject({ code: 'NETWORK_DENIED', step: 'fetch' });
      // A bound that catches a run stuck on something (stdin, a lock), not a speed goal: all the
      // examples run at once on a shared machine. Speed is measured in `npm run bench`.
      if (record.endedAt) expect(record.endedAt - record.startedAt!).toBeLessThan(10_000);
    });
  }, 60_000);

  it("--idempotency-key answers the key's run; --reuse failed starts a new one when it failed", async () => {
    const file = await directive(
      'flaky',
      `<step name="go"><retry attempts="1"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="test -f ok"/></execute></step>`,
    );
    const key = ['--idempotency-key', 'job-7'];
    const first = await json(['run', file, ...key]);
    expect(first.code).toBe(1);
    const again = await json(['run', file, ...key]);
    expect({ code: again.code, runId: again.record.runId }).toEqual({
      code: 1,
      runId: first.record.runId,
    });
    await writeFile(join(project, 'ok'), '');
    const reused = await json(['run', file, ...key, '--reuse', 'failed']);
    expect(reused.code).toBe(0);
    expect(reused.record.runId).not.toBe(first.record.runId);
    const bad = await cli(['run', file, ...key, '--reuse', 'sometimes', '--project', project]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"sometimes" is not a reuse policy');
  }, 30_000);
});

describe('dirigent run --tag and runs --tag', () => {
  it('tags a run from the command line, and lists the runs with every tag asked for', async () => {
    const file = await directive('tagged', `<step name="go"><render>hi</render></step>`);
    const a = await json(['run', file, '--tag', 'customer=c7', '--tag', 'region=eu']);
    expect(a.code).toBe(0);
    expect(a.record.tags).toEqual({ customer: 'c7', region: 'eu' });
    await json(['run', file, '--tag', 'customer=c8']);
    const listed = await cli(['runs', '--tag', 'customer=c7', '--project', project, '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((r: { runId: string }) => r.runId)).toEqual([
      a.record.runId,
    ]);
    const human = await cli(['runs', '--tag', 'region=eu', '--project', project]);
    expect(human.stdout).toContain('customer=c7 region=eu');
    const bad = await cli(['runs', '--tag', 'customer', '--project', project]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('write name=value');
  }, 30_000);
});

describe('inputs from the command line', () => {
  const TYPES = `
    <input name="text" type="string">a string</input>
    <input name="count" type="integer">an integer</input>
    <input name="ratio" type="number">a number</input>
    <input name="flag" type="boolean">a boolean</input>
    <input name="tags" type="array">an array</input>
    <input name="opts" type="object">an object</input>`;
  const body = `    <step name="show">
      <execute item_type="tool" item_id="dirigent/util/echo">
        <param name="all" expr="inputs"/>
      </execute>
    </step>`;
  const OUT = '<output name="all" value="${steps.show.result.all}"/>';

  it('--input values are strings coerced to the declared types', async () => {
    const file = await directive('types', body, { inputs: TYPES, outputs: OUT });
    const { code, record } = await json([
      'run',
      file,
      '-i',
      'text=42',
      '-i',
      'count=3',
      '--input',
      'ratio=0.5',
      '--input',
      'flag=true',
      '--input',
      'tags=["a","b"]',
      '--input',
      'opts={"k":1,"eq":"a=b"}',
    ]);
    expect(code).toBe(0);
    expect(record.outputs).toEqual({
      all: {
        text: '42',
        count: 3,
        ratio: 0.5,
        flag: true,
        tags: ['a', 'b'],
        opts: { k: 1, eq: 'a=b' },
      },
    });
  });

  it('--inputs takes a JSON object, or @file holding one; --input wins over it', async () => {
    const file = await directive('types', body, { inputs: TYPES, outputs: OUT });
    const all = { text: 'hi', count: 2, ratio: 1.5, flag: false, tags: [1], opts: {} };
    const inline = await json(['run', file, '--inputs', JSON.stringify(all)]);
    expect(inline.code).toBe(0);
    expect(inline.record.outputs).toEqual({ all });

    await writeFile(
      join(project, 'inputs.json'),
      JSON.stringify({ ...all, count: '7', flag: 'yes' }),
    );
    const fromFile = await json([
      'run',
      file,
      '--inputs',
      `@${join(project, 'inputs.json')}`,
      '--input',
      'text=override',
    ]);
    expect(fromFile.code).toBe(0);
    expect(fromFile.record.outputs).toEqual({
      all: { ...all, count: 7, flag: true, text: 'override' },
    });
  });

  it('a value that does not coerce is an invalid input (exit 2)', async () => {
    const file = await directive('types', body, { inputs: TYPES, outputs: OUT });
    const { code, record } = await json([
      'run',
      file,
      '-i',
      'count=three',
      '-i',
      'tags={"not":"an array"}',
    ]);
    expect(code).toBe(2);
    expect(record.error?.code).toBe('INVALID_INPUTS');
    expect(record.error?.message).toContain('"count" must be an integer');
    expect(record.error?.message).toContain('"tags" must be an array');
  });
});

describe('dirigent signal and cancel: a waiting run resumed from other processes', () => {
  async function startWaiting(): Promise<string> {
    const { code, record } = await json([
      'run',
      example('wait_for_signal'),
      '--input',
      'version=2.1.0',
    ]);
    expect(code).toBe(3);
    return record.runId!;
  }

  it('signals resume the run, each process printing the outcome and exiting as run would', async () => {
    const runId = await startWaiting();

    const first = await json(['signal', runId, 'review', '--payload', '{"approved": true}']);
    expect(first.code).toBe(3);
    expect(first.record).toMatchObject({
      runId,
      status: 'waiting',
      waiting: [{ step: 'window', signal: 'release_window' }],
    });
    expect(await storedRecord(runId)).toMatchObject({
      status: 'waiting',
      waiting: [{ signal: 'release_window' }],
    });

    const second = await json(['signal', runId, 'release_window', '--payload', '{"by": "ops"}']);
    expect(second.code).toBe(0);
    expect(second.record).toMatchObject({
      runId,
      status: 'completed',
      outputs: { approved: true, message: 'Published v2.1.0 (window opened by ops).' },
      error: null,
    });
    expect(second.record.steps.map((s) => [s.name, s.status])).toEqual([
      ['draft', 'completed'],
      ['review', 'completed'],
      ['window', 'completed'],
      ['publish', 'completed'],
    ]);
  });

  it('a signal whose run then fails exits 1', async () => {
    const runId = await startWaiting();
    expect((await json(['signal', runId, 'review', '--payload', '{"approved": true}'])).code).toBe(
      3,
    );
    // A plain-string payload has no "by": ${result.by} is an unknown path, and the step fails.
    const { code, record } = await json(['signal', runId, 'release_window', '--payload', 'now']);
    expect(code).toBe(1);
    expect(record).toMatchObject({ status: 'failed', error: { step: 'window' } });
  });

  it('the finished run is stored as finished: it cannot be signalled again', async () => {
    const runId = await startWaiting();
    const done = await json([
      'signal',
      runId,
      'review',
      '--payload',
      '{"approved": false, "reason": "no"}',
    ]);
    expect(done.code).toBe(0);
    expect(done.record.outputs).toEqual({ approved: false, message: 'v2.1.0 not published: no' });
    expect((await storedRecord(runId)).status).toBe('completed');
    const again = await json(['signal', runId, 'review', '--payload', '{"approved": true}']);
    expect(again.code).toBe(2);
    expect(again.record.error?.code).toBe('RUN_NOT_WAITING');
  });

  it('a signal nobody waits for, or to an unknown run, fails without touching the run', async () => {
    const runId = await startWaiting();
    const wrong = await json(['signal', runId, 'release_window', '--payload', '{}']);
    expect(wrong.code).toBe(2);
    expect(wrong.record.error?.code).toBe('UNKNOWN_SIGNAL');
    // The hint names the signal the run does wait for.
    const [diagnostic] = (wrong.record.error as unknown as { diagnostics: { hint?: string }[] })
      .diagnostics;
    expect(diagnostic?.hint).toContain('review');
    expect((await json(['signal', 'no-such-run', 'review'])).record.error?.code).toBe(
      'RUN_NOT_FOUND',
    );
    expect((await storedRecord(runId)).status).toBe('waiting');
    expect((await json(['signal', runId, 'review', '--payload', '{"approved": false}'])).code).toBe(
      0,
    );
  });

  it("a payload that does not match the step's <answer>s is refused (INVALID_PAYLOAD, exit 2), every problem said, and the run waits on unchanged", async () => {
    const file = await directive(
      'typed_review',
      `    <step name="review">
      <instruction>Approve the release?
        <answer name="approved" type="boolean" required="true">Whether it ships</answer>
        <answer name="reason" type="string"/>
      </instruction>
    </step>`,
      { outputs: '<output name="approved" value="${steps.review.result.approved}"/>' },
    );
    const human = await cli(['run', file, '--project', project]);
    expect(human.code).toBe(3);
    expect(human.stdout).toContain(
      'its answer: an object with approved (boolean, required) and reason (string)',
    );
    expect(human.stdout).toMatch(
      /dirigent signal \S+ review --payload '\{"approved":true,"reason":"…"\}'/,
    );
    const started = await json(['run', file]);
    expect(started.code).toBe(3);
    const runId = started.record.runId!;
    expect(started.record.waiting).toEqual([
      {
        step: 'review',
        signal: 'review',
        text: 'Approve the release?',
        answer: {
          kind: 'fields',
          fields: [
            { name: 'approved', type: 'boolean', required: true, description: 'Whether it ships' },
            { name: 'reason', type: 'string', required: false },
          ],
        },
      },
    ]);

    const refused = await json([
      'signal',
      runId,
      'review',
      '--payload',
      '{"approved": "yes", "reason": 7}',
    ]);
    expect(refused.code).toBe(2);
    expect(refused.record.error?.code).toBe('INVALID_PAYLOAD');
    expect(refused.record.error?.message).toContain(
      'field "approved" must be a boolean, got "yes"',
    );
    expect(refused.record.error?.message).toContain('field "reason" must be a string, got 7');
    const plain = await cli(['signal', runId, 'review', '--payload', 'yes', '--project', project]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain(
      'the answer must be an object with fields approved, reason, got "yes"',
    );
    expect(plain.stderr).toContain('[INVALID_PAYLOAD]');
    expect(plain.stderr).toContain('e.g. {"approved":true,"reason":"…"}');
    expect(await storedRecord(runId)).toEqual(started.record);

    const done = await json(['signal', runId, 'review', '--payload', '{"approved": true}']);
    expect(done.code).toBe(0);
    expect(done.record.outputs).toEqual({ approved: true });
  });

  it('cancel ends a waiting run (exit 1), and the cancelled run stays cancelled', async () => {
    const runId = await startWaiting();
    const cancelled = await json(['cancel', runId]);
    expect(cancelled.code).toBe(1);
    expect(cancelled.record).toMatchObject({
      runId,
      status: 'cancelled',
      outputs: null,
      error: { code: 'CANCELLED' },
    });
    expect(cancelled.record.steps.map((s) => [s.name, s.status])).toEqual([
      ['draft', 'completed'],
      ['review', 'cancelled'],
    ]);
    expect((await storedRecord(runId)).status).toBe('cancelled');
    const late = await json(['signal', runId, 'review', '--payload', '{"approved": true}']);
    expect(late.code).toBe(2);
    expect(late.record.error?.code).toBe('RUN_NOT_WAITING');
    // Cancelling it again says it has ended, with its status, and exits 1.
    const again = await json(['cancel', runId]);
    expect(again.code).toBe(1);
    expect(again.record.error).toMatchObject({
      code: 'RUN_ENDED',
      message: expect.stringContaining('has ended (cancelled)'),
    });
    expect((await storedRecord(runId)).status).toBe('cancelled');
  });

  it('cancel of a completed run says it has ended (RUN_ENDED, exit 1), in both output modes', async () => {
    const done = await json(['run', example('hello')]);
    expect(done.record.status).toBe('completed');
    const runId = done.record.runId!;
    const refused = await json(['cancel', runId]);
    expect(refused.code).toBe(1);
    expect(refused.record.error).toMatchObject({
      code: 'RUN_ENDED',
      message: expect.stringContaining('has ended (completed)'),
    });
    const plain = await cli(['cancel', runId, '--project', project]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('[RUN_ENDED]');
    expect((await storedRecord(runId)).status).toBe('completed');
  });

  it('human output of a waiting run says what it asks and how to resume it', async () => {
    const { code, stdout } = await cli(['run', example('wait_for_signal'), '--project', project]);
    expect(code).toBe(3);
    const runId = /run (\S+) waiting/.exec(stdout)?.[1];
    expect(runId).toBeDefined();
    expect(stdout).toContain('Release notes for v1.0.0');
    expect(stdout).toContain(`dirigent signal ${runId} review --payload`);
    const resumed = await cli([
      'signal',
      runId!,
      'review',
      '--payload',
      '{"approved": false, "reason": "later"}',
      '--project',
      project,
    ]);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(/rejected/);
    expect(resumed.stdout).toContain('message: v1.0.0 not published: later');
  });
});

describe('dirigent validate', () => {
  it('accepts every example (exit 0)', async () => {
    const files = readdirSync(DIRECTIVES)
      .filter((f) => f.endsWith('.md'))
      .map((f) => join('directives', f));
    const { code, stdout } = await cli(['validate', ...files], { cwd: ROOT });
    expect(code).toBe(0);
    for (const f of files) expect(stdout).toContain(`ok ${f}`);
  });

  it('reports errors as file:line:col and exits 2 when any file is invalid', async () => {
    await directive(
      'bad',
      `    <step name="one">\n      <render>hi</render>\n      <next to="nowhere"/>\n    </step>`,
    );
    const { code, stdout } = await cli(['validate', 'bad.md', join(DIRECTIVES, 'hello.md')]);
    expect(code).toBe(2);
    expect(stdout).toMatch(/^bad\.md:11:7: error: .*"nowhere".*\[UNKNOWN_STEP\]$/m);
    expect(stdout).toContain('invalid bad.md');
    expect(stdout).toContain(`ok ${join(DIRECTIVES, 'hello.md')}`);
  });
});

describe('dirigent runs', () => {
  it('refuses a status no run can have, listing the statuses (queued included), with did-you-mean', async () => {
    const bogus = await cli(['runs', '--status', 'complete', '--project', project]);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain('"complete" is not a run status. Did you mean "completed"?');
    expect(bogus.stderr).toContain(
      'queued, running, waiting, paused, completed, failed, cancelled',
    );
    const done = await json(['run', example('hello')]);
    const listed = await cli(['runs', '--status', 'completed', '--project', project]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(done.record.runId!);
  });
});

describe('dirigent validate and graph take item ids, as run does', () => {
  it('validates and draws a directive of .ai/directives/ by its item id; an unknown one is UNKNOWN_DIRECTIVE', async () => {
    const dir = join(project, '.ai', 'directives', 'ops');
    await mkdir(dir, { recursive: true });
    const text = await readFile(example('hello'), 'utf8');
    await writeFile(join(dir, 'report.md'), text.replace('name="hello"', 'name="report"'));
    const validated = await cli(['validate', 'ops/report', '--project', project]);
    expect(validated.code, validated.stdout).toBe(0);
    expect(validated.stdout).toContain('ok ops/report');
    const drawn = await cli(['graph', 'ops/report', '--project', project]);
    expect(drawn.code, drawn.stderr).toBe(0);
    expect(drawn.stdout).toMatch(/^flowchart (TD|LR)\n/);

    const unknown = await cli(['validate', 'ops/nope', '--project', project, '--json']);
    expect(unknown.code).toBe(2);
    const [result] = JSON.parse(unknown.stdout) as { errors: { code: string }[] }[];
    expect(result!.errors.map((e) => e.code)).toEqual(['UNKNOWN_DIRECTIVE']);
    const graph = await cli(['graph', 'ops/nope', '--project', project]);
    expect(graph.code).toBe(2);
    expect(graph.stderr).toContain('[UNKNOWN_DIRECTIVE]');
    expect(graph.stderr).not.toContain('INTERNAL');
  });
});

describe('dirigent graph', () => {
  it('prints a Mermaid flowchart of the machine', async () => {
    const { code, stdout } = await cli(['graph', example('branch_and_loop')]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^flowchart (TD|LR)\n/);
    for (const step of ['start', 'announce', 'tick', 'report']) expect(stdout).toContain(step);
    // The loop: an edge from tick back to tick.
    expect(stdout).toMatch(/n_tick -->(\|[^|]*\|)? n_tick/);
  });

  it('exits 2 for an invalid directive', async () => {
    await directive(
      'bad',
      `    <step name="one">\n      <render>hi</render>\n      <next to="nowhere"/>\n    </step>`,
    );
    const { code, stderr } = await cli(['graph', 'bad.md']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/bad\.md:11:7: error:/);
  });
});

describe('human output (without --json)', () => {
  it("shows each step's start and end, then the outputs", async () => {
    const { code, stdout } = await cli([
      'run',
      example('branch_and_loop'),
      '--project',
      project,
      '--input',
      'rounds=2',
    ]);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    const started = (step: string) =>
      lines.findIndex((l) => l.includes(step) && !/completed|failed|skipped/.test(l));
    const ended = (step: string) => lines.findIndex((l) => l.includes(step) && /completed/.test(l));
    for (const step of ['start', 'tick', 'report']) {
      expect(started(step), `start of ${step}`).toBeGreaterThanOrEqual(0);
      expect(ended(step), `end of ${step}`).toBeGreaterThan(started(step));
    }
    expect(stdout).toMatch(/announce.*skipped/);
    expect(lines.filter((l) => /tick.*completed/.test(l))).toHaveLength(2);
    expect(stdout).toMatch(/run \S+ completed/);
    expect(stdout).toContain('count: 2');
    expect(stdout).toContain('seen: [1,2]');
    expect(stdout).toContain('summary: Counted 2 in quiet mode.');
  });

  it('shows retries and the error of a failing step', async () => {
    const { code, stdout } = await cli([
      'run',
      example('retry_and_recover'),
      '--project',
      project,
      '--input',
      'failures=9',
    ]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/flaky.*attempt 2/);
    expect(stdout).toMatch(/flaky failed .*after 4 attempts/);
    expect(stdout).toMatch(/run \S+ failed/);
    expect(stdout).toMatch(/^error: .*\[COMMAND_FAILED\] at step "flaky"$/ms);
  });
});

describe('dirigent run --timeout, and a Redis no worker serves', () => {
  const redis = redisForTest();
  const napping = () =>
    directive(
      'nap',
      `<step name="nap"><execute item_type="tool" item_id="dirigent/util/sleep"><param name="ms" value="20000"/></execute></step>`,
    );

  it('embedded, cancels a run still going when the timeout passes, and exits 4', async () => {
    const started = Date.now();
    const r = await json(['run', await napping(), '--timeout', '1']);
    expect(r.code, r.stderr).toBe(4);
    expect(r.record).toMatchObject({ status: 'cancelled' });
    expect(r.stderr).toContain('did not end within --timeout 1 s and was cancelled');
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('says on standard error, in every output mode, that no worker takes the run, and bounds the wait', async () => {
    const env = { REDIS_URL: redis.url, DIRIGENT_PREFIX: redis.prefix };
    const file = await napping();
    const quiet = await json(['run', file, '--timeout', '1.5'], { env });
    expect(quiet.code, quiet.stderr).toBe(4);
    expect(quiet.record).toMatchObject({ status: 'queued' });
    expect(quiet.stderr).toContain('No worker is connected');
    expect(quiet.stderr).toContain('it goes on (`dirigent status');

    const plain = await cli(['run', file, '--project', project, '--timeout', '1'], { env });
    expect(plain.code).toBe(4);
    expect(plain.stderr).toContain('No worker is connected');
  });

  it('refuses a --timeout that is not a number of seconds (exit 2)', async () => {
    const r = await json(['run', await napping(), '--timeout', 'soon']);
    expect(r.code).toBe(2);
    expect(r.record.error).toMatchObject({ code: 'INVALID_REQUEST' });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

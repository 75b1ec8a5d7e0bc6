/**
 * Workers serve a project: jobs name directives and tools by item id, never a path of the machine
 * that submitted them. Two workers started on copies of a project in different folders serve runs
 * started from a third; a worker whose copy of the directive or of a tool differs says so and runs
 * nothing else.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Dirigent } from '../../src/operations/dirigent.js';
import { dirigentProcesses } from '../support/dirigent-processes.js';
import { inProcessWorker } from '../support/in-process-worker.js';
import { redisForTest } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

const redis = redisForTest();
const processes = dirigentProcesses();
let root: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'dirigent-projects-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const env = () => ({ ...process.env, REDIS_URL: redis.url, DIRIGENT_PREFIX: redis.prefix });

/** A project with a directive `greet/hello` calling the YAML tool `text/shout`. */
function project(name: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, '.ai', 'directives', 'greet'), { recursive: true });
  mkdirSync(join(dir, '.ai', 'tools', 'text'), { recursive: true });
  writeFileSync(
    join(dir, '.ai', 'directives', 'greet', 'hello.md'),
    `# hello\n\n\`\`\`xml\n<directive name="hello" version="1.0.0">
  <inputs><input name="who" type="string"/></inputs>
  <process>
    <step name="shout"><execute item_type="tool" item_id="text/shout"><param name="text" value="{input:who}"/></execute></step>
    <step name="where"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="pwd"/></execute></step>
  </process>
  <outputs>
    <output name="said" value="\${steps.shout.result.stdout}"/>
    <output name="in" value="\${steps.where.result.stdout}"/>
  </outputs>
</directive>\n\`\`\`\n`,
  );
  writeShout(dir, 'tr a-z A-Z');
  return dir;
}

function writeShout(dir: string, filter: string): void {
  writeFileSync(
    join(dir, '.ai', 'tools', 'text', 'shout.yaml'),
    `version: 1.0.0\ntool_type: yaml\nexecutor_id: rye/core/runtimes/bash_runtime\ndescription: Shouts.\nconfig:\n  command: printf '%s' "$(echo "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["text"])')" | ${filter}\nconfig_schema:\n  type: object\n  properties: { text: { type: string } }\n  required: [text]\n`,
  );
}

describe('workers serve a project', { timeout: 60_000 }, () => {
  it('runs a directive started from a third folder on workers serving copies of the project elsewhere', async () => {
    const submitter = project('submitter');
    const a = join(root, 'machine-a');
    const b = join(root, 'machine-b');
    cpSync(submitter, a, { recursive: true });
    cpSync(submitter, b, { recursive: true });
    await processes.worker(env(), '--project', a, '--queues', 'runs');
    await processes.worker(env(), '--project', b, '--queues', 'tools');
    const r = await processes.cli(
      env(),
      'run',
      'greet/hello',
      '--input',
      'who=ada',
      '--json',
      '--project',
      submitter,
    );
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const record = JSON.parse(r.stdout) as { outputs: { said: string; in: string } };
    expect(record.outputs.said.trim()).toBe('ADA');
    // The tool ran in the project its worker serves, not in the submitter's folder.
    expect(record.outputs.in.trim()).toBe(b);
  });

  it("refuses a run whose directive differs from the worker's copy, naming the mismatch", async () => {
    const submitter = project('submitter');
    const served = project('served');
    const file = join(served, '.ai', 'directives', 'greet', 'hello.md');
    writeFileSync(file, readFileSync(file, 'utf8').replace('pwd', 'pwd; echo changed'));
    await processes.worker(env(), '--project', served);
    const r = await processes.cli(
      env(),
      'run',
      'greet/hello',
      '--input',
      'who=x',
      '--json',
      '--project',
      submitter,
    );
    const out = JSON.parse(r.stdout) as {
      status: string;
      error: { code: string; message: string };
    };
    expect(r.code).toBe(2);
    expect(out.error.code).toBe('DIRECTIVE_MISMATCH');
    expect(out.error.message).toContain('greet/hello');
  });

  it('runs a directive edited a moment before its start as edited, not as a mismatch', async () => {
    const dir = project('edited');
    const file = join(dir, '.ai', 'directives', 'greet', 'hello.md');
    const worker = inProcessWorker(redis, { projectDir: dir });
    const dirigent = await Dirigent.open({ project: dir, redis: redis.url, prefix: redis.prefix });
    try {
      const first = await dirigent.run({ directive: 'greet/hello', inputs: { who: 'a' } });
      expect(first.status).toBe('completed');
      // Each edit is started as soon as the project has seen it: sooner than a worker that has
      // just looked at the file would look again on its own.
      for (let n = 1; n <= 4; n++) {
        const edited = readFileSync(file, 'utf8').replace(/pwd(; echo \d+)?"/, `pwd; echo ${n}"`);
        writeFileSync(file, edited);
        await waitFor(async () => (await dirigent.load('greet/hello')).text === edited, {
          what: 'the project to see the edit',
          intervalMs: 5,
        });
        const record = await dirigent.run({ directive: 'greet/hello', inputs: { who: 'b' } });
        expect(record.error ?? null).toBeNull();
        expect(record.outputs?.in).toContain(`${n}`);
      }
    } finally {
      await dirigent.close();
      await worker.close();
    }
  });

  it('fails the step of a tool whose worker has another version of it, with TOOL_MISMATCH', async () => {
    const submitter = project('submitter');
    const served = project('served');
    writeShout(served, 'tr a-z A-Z | rev');
    await processes.worker(env(), '--project', served);
    const r = await processes.cli(
      env(),
      'run',
      'greet/hello',
      '--input',
      'who=ada',
      '--json',
      '--project',
      submitter,
    );
    const record = JSON.parse(r.stdout) as {
      status: string;
      error: { code: string; message: string; step: string };
    };
    expect(r.code).toBe(1);
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: 'TOOL_MISMATCH', step: 'shout' });
    expect(record.error.message).toContain('text/shout');
  });
});

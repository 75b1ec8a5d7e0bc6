/**
 * The operations, embedded: one object made from a project runs, reads, lists, waits for,
 * signals and cancels runs; idempotency keys start one run per key even when requests race;
 * directives are listed and validated. (The same operations on Redis: test/integration.)
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Dirigent } from '../../../src/operations/dirigent.js';
import { writeDirective } from '../../support/directive-file.js';
import { waitFor } from '../../support/wait-for.js';

let project: string;
let dirigent: Dirigent;

beforeEach(async () => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-ops-'));
  const dir = join(project, '.ai', 'directives');
  mkdirSync(join(dir, 'greet'), { recursive: true });
  writeDirective(
    join(dir, 'greet'),
    'hello',
    `<inputs><input name="name" type="string" required="true">who</input></inputs>
    <process><step name="greet"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo {input:name} >> ran.log; echo 'Hello, {input:name}!'"/></execute></step></process>
    <outputs><output name="greeting" expr="$trim(steps.greet.result.stdout)"/></outputs>`,
  );
  writeDirective(
    dir,
    'ask',
    `<process><step name="ok"><instruction>Ship?</instruction></step></process>`,
  );
  writeDirective(
    dir,
    'broken',
    `<process><step name="a"><next to="nowhere"/><render>x</render></step></process>`,
  );
  dirigent = await Dirigent.open({ project });
});
afterEach(async () => {
  await dirigent.close();
  rmSync(project, { recursive: true, force: true });
});

describe('the operations, embedded', () => {
  it('runs a directive by item id and reads it back, as get and list see it', async () => {
    const record = await dirigent.run({ directive: 'greet/hello', inputs: { name: 'Ada' } });
    expect(record).toMatchObject({ status: 'completed', outputs: { greeting: 'Hello, Ada!' } });
    expect(await dirigent.get(record.runId)).toMatchObject({
      runId: record.runId,
      status: 'completed',
    });
    const page = await dirigent.list({ directive: 'greet/hello' });
    expect(page.runs.map((r) => r.runId)).toEqual([record.runId]);
  });

  it('refuses what it cannot start, saying why, before anything runs', async () => {
    await expect(dirigent.start({ directive: 'nope' })).rejects.toMatchObject({
      code: 'UNKNOWN_DIRECTIVE',
    });
    await expect(dirigent.start({ directive: '../etc/passwd' })).rejects.toMatchObject({
      code: 'INVALID_ITEM_ID',
    });
    await expect(
      dirigent.start({ directive: 'greet/hello', inputs: { nme: 'x' } }),
    ).rejects.toMatchObject({
      code: 'INVALID_INPUTS',
    });
    await expect(dirigent.get('no-such-run')).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
  });

  it('starts one run per idempotency key, however many requests race, and refuses the key for other inputs', async () => {
    const request = {
      directive: 'greet/hello',
      inputs: { name: 'Once' },
      idempotencyKey: 'order-1',
    };
    const started = await Promise.all(Array.from({ length: 10 }, () => dirigent.start(request)));
    expect(new Set(started.map((s) => s.runId)).size).toBe(1);
    expect(started.filter((s) => s.created)).toHaveLength(1);
    await dirigent.wait(started[0]!.runId);
    // Another object over the same project (another process) sees the same claim.
    const other = await Dirigent.open({ project });
    expect(await other.start(request)).toMatchObject({
      runId: started[0]!.runId,
      created: false,
      record: { status: 'completed' },
    });
    await expect(other.start({ ...request, inputs: { name: 'Twice' } })).rejects.toMatchObject({
      code: 'IDEMPOTENCY_CONFLICT',
    });
    await other.close();
    expect(readFileSync(join(project, 'ran.log'), 'utf8')).toBe('Once\n');
  });

  it('waits for a run to wait, signals it, and cancels another', async () => {
    const { runId } = await dirigent.start({ directive: 'ask' });
    const waiting = await dirigent.wait(runId);
    expect(waiting).toMatchObject({
      status: 'waiting',
      waiting: [{ signal: 'ok', text: 'Ship?' }],
    });
    await expect(dirigent.signal(runId, 'nope', 1)).rejects.toMatchObject({
      code: 'UNKNOWN_SIGNAL',
    });
    expect(await dirigent.signal(runId, 'ok', 'yes')).toMatchObject({ status: 'completed' });
    const second = await dirigent.start({ directive: 'ask' });
    await dirigent.wait(second.runId);
    expect(await dirigent.cancel(second.runId, 'not today')).toMatchObject({ status: 'cancelled' });
  });

  it('pages a list newest first with a cursor, every run once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await dirigent.run({ directive: 'greet/hello', inputs: { name: `n${i}` } })).runId);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await dirigent.list({ limit: 2, ...(cursor !== undefined && { cursor }) });
      seen.push(...page.runs.map((r) => r.runId));
      cursor = page.next;
    } while (cursor !== undefined);
    expect(seen).toEqual([...ids].reverse());
    await expect(dirigent.list({ cursor: 'garbage' })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    });
    await expect(dirigent.list({ limit: 0 })).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
  });

  it('tells a watcher of the steps as they go', async () => {
    const events: string[] = [];
    const { runId } = await dirigent.start({
      directive: 'greet/hello',
      inputs: { name: 'W' },
      observer: {
        stepStarted: (_r, step) => events.push(`started ${step}`),
        stepEnded: (_r, e) => events.push(`${e.status} ${e.name}`),
      },
    });
    await dirigent.wait(runId);
    expect(events).toEqual(['started greet', 'completed greet']);
  });

  it('lists the directives with their inputs and says why one cannot run; validates a text', async () => {
    const all = await dirigent.directives();
    const mine = all.filter((d) => d.space === 'project');
    expect(mine.map((d) => [d.directive, d.valid])).toEqual([
      ['ask', true],
      ['broken', false],
      ['greet/hello', true],
    ]);
    expect(mine[2]!.inputs).toEqual([
      { name: 'name', type: 'string', required: true, description: 'who' },
    ]);
    expect(mine[1]!.errors[0]).toMatchObject({ code: 'UNKNOWN_STEP' });
    const checked = await dirigent.validate({
      source:
        '# x\n\n```xml\n<directive name="x" version="1.0.0"><process><step name="a"><render>${nope.x}</render></step></process></directive>\n```\n',
    });
    expect(checked.valid).toBe(false);
    expect(checked.errors[0]!.code).toMatch(/TEMPLATE/);
  });

  it('tells in one answer what is wrong in the text and against the project, in file order', async () => {
    const checked = await dirigent.validate({
      source: [
        '# x',
        '',
        '```xml',
        '<directive name="x" version="1.0.0">',
        '<inputs><input name="threshold" type="number" default="1"/></inputs>',
        '<process>',
        '<step name="a"><condition expr="inputs.treshold > 3"/>',
        '<execute item_type="tool" item_id="dirigent/fs/globb"><param name="pattern" value="*"/></execute></step>',
        '<step name="b"><execute item_type="tool" item_id="dirigent/util/sleep"><param name="secs" value="1"/></execute></step>',
        '</process>',
        '</directive>',
        '```',
        '',
      ].join('\n'),
    });
    expect(checked.valid).toBe(false);
    expect(checked.errors.map((e) => [e.code, e.loc?.line])).toEqual([
      ['UNKNOWN_TEMPLATE_PATH', 7],
      ['UNKNOWN_TOOL', 8],
      ['INVALID_PARAMS', 9],
      ['INVALID_PARAMS', 9],
    ]);
    expect(checked.errors[1]!.message).toContain('Did you mean "dirigent/fs/glob"?');
    expect(checked.errors.slice(2).map((e) => e.message)).toEqual([
      'dirigent/util/sleep needs the parameter "ms", which this <execute> does not give.',
      'dirigent/util/sleep takes no parameter "secs".',
    ]);
  });

  it('reads a directive again once its file changed, and not before', async () => {
    const first = await dirigent.run({ directive: 'greet/hello', inputs: { name: 'A' } });
    expect(first.outputs).toEqual({ greeting: 'Hello, A!' });
    const file = join(project, '.ai', 'directives', 'greet', 'hello.md');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace("'Hello, {input:name}!'", "'Hi, {input:name}!'"),
    );
    const generation = dirigent.loader.items.generation;
    await waitFor(() => dirigent.loader.items.generation !== generation, {
      what: 'the item cache to see the edit',
      timeoutMs: 5000,
    });
    const second = await dirigent.run({ directive: 'greet/hello', inputs: { name: 'B' } });
    expect(second.outputs).toEqual({ greeting: 'Hi, B!' });
  });
});

/**
 * The item interface's load and execute, embedded: an item is read from the first space holding
 * it and verified first; a copy goes byte for byte into the project or user space (never the
 * system's); executing a knowledge entry returns it, a tool runs, a directive runs and, when it
 * waits on an instruction, a second execute with the answer completes it.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { generateSigningKey, signItem, writeTrustedKey } from '../../../src/items/signing/index.js';
import { Dirigent } from '../../../src/operations/dirigent.js';
import { writeDirective } from '../../support/directive-file.js';

let project: string;
let userSpace: string;
let dirigent: Dirigent;

const write = (file: string, text: string) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
};

const NOTE = `---
name: deploys
title: How we deploy
description: The rules for shipping to production
category: ops
version: "1.0.0"
tags: [release, ops]
---

# How we deploy

Deploy on weekdays only.
`;

beforeEach(async () => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-items-'));
  userSpace = mkdtempSync(join(tmpdir(), 'dirigent-user-'));
  vi.stubEnv('DIRIGENT_USER_SPACE', userSpace);
  write(join(project, '.ai', 'knowledge', 'ops', 'deploys.md'), NOTE);
  mkdirSync(join(project, '.ai', 'directives'));
  writeDirective(
    join(project, '.ai', 'directives'),
    'approve',
    `<inputs><input name="change" type="string" required="true">what ships</input></inputs>
    <process><step name="ask"><instruction>Ship {input:change}?</instruction></step>
    <step name="say"><render>answer: \${steps.ask.result.answer}</render></step></process>
    <outputs><output name="said" expr="steps.say.result"/></outputs>`,
  );
  dirigent = await Dirigent.open({ project });
});
afterEach(async () => {
  await dirigent.close();
  vi.unstubAllEnvs();
  rmSync(project, { recursive: true, force: true });
  rmSync(userSpace, { recursive: true, force: true });
});

describe('load', () => {
  it('reads an item with its metadata and signature state, from the space that holds it', async () => {
    const loaded = await dirigent.items.load({ kind: 'knowledge', itemId: 'ops/deploys' });
    expect(loaded).toMatchObject({
      space: 'project',
      content: NOTE,
      metadata: {
        name: 'deploys',
        title: 'How we deploy',
        category: 'ops',
        tags: ['release', 'ops'],
      },
      signature: { status: 'unsigned' },
    });
    expect(loaded.copiedTo).toBeUndefined();
  });

  it('copies a signed item into the user space byte for byte, where it still verifies', async () => {
    const key = generateSigningKey();
    await writeTrustedKey(join(project, '.ai'), key.publicKeyPem, 'me');
    const file = join(project, '.ai', 'knowledge', 'ops', 'deploys.md');
    await signItem(file, 'knowledge', key);
    const copied = await dirigent.items.load({
      kind: 'knowledge',
      itemId: 'ops/deploys',
      destination: 'user',
    });
    const target = join(userSpace, 'knowledge', 'ops', 'deploys.md');
    expect(copied.copiedTo).toEqual({ space: 'user', file: target, unchanged: false });
    expect(readFileSync(target, 'utf8')).toBe(readFileSync(file, 'utf8'));
    const fromUser = await dirigent.items.load({
      kind: 'knowledge',
      itemId: 'ops/deploys',
      source: 'user',
    });
    expect(fromUser).toMatchObject({
      space: 'user',
      signature: { status: 'verified', owner: 'me' },
    });
  });

  it('shadows a system tool by copying it into the project', async () => {
    const copied = await dirigent.items.load({
      kind: 'tool',
      itemId: 'rye/core/runtimes/bash/bash',
      destination: 'project',
    });
    expect(copied.space).toBe('system');
    expect(existsSync(copied.copiedTo!.file)).toBe(true);
    const again = await dirigent.items.load({
      kind: 'tool',
      itemId: 'rye/core/runtimes/bash/bash',
    });
    expect(again.space).toBe('project');
  });

  it('refuses a copy into the system space, onto a different item, and a tampered item', async () => {
    await expect(
      dirigent.items.load({ kind: 'knowledge', itemId: 'ops/deploys', destination: 'system' }),
    ).rejects.toMatchObject({ code: 'SPACE_READ_ONLY' });
    write(join(userSpace, 'knowledge', 'ops', 'deploys.md'), 'something else\n');
    await expect(
      dirigent.items.load({ kind: 'knowledge', itemId: 'ops/deploys', destination: 'user' }),
    ).rejects.toMatchObject({ code: 'ITEM_EXISTS' });
    const file = join(project, '.ai', 'knowledge', 'ops', 'deploys.md');
    await signItem(file, 'knowledge', generateSigningKey());
    writeFileSync(file, readFileSync(file, 'utf8').replace('weekdays', 'weekends'));
    await expect(
      dirigent.items.load({ kind: 'knowledge', itemId: 'ops/deploys' }),
    ).rejects.toMatchObject({ code: 'INTEGRITY_FAILED' });
  });

  it('describes a built-in tool, which has no file to copy', async () => {
    const echo = await dirigent.items.load({ kind: 'tool', itemId: 'dirigent/util/echo' });
    expect(echo).toMatchObject({ space: 'system', metadata: { type: 'builtin' } });
    expect(JSON.parse(echo.content)).toMatchObject({ item_id: 'dirigent/util/echo' });
    await expect(
      dirigent.items.load({ kind: 'tool', itemId: 'dirigent/util/echo', destination: 'project' }),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
  });
});

describe('execute', () => {
  it('returns a knowledge entry: its metadata and content', async () => {
    const done = await dirigent.items.execute({ kind: 'knowledge', itemId: 'ops/deploys' });
    expect(done).toMatchObject({
      kind: 'knowledge',
      metadata: { name: 'deploys', version: '1.0.0' },
      content: '# How we deploy\n\nDeploy on weekdays only.\n',
    });
  });

  it('runs a tool, or with dry_run only checks its parameters', async () => {
    const ran = await dirigent.items.execute({
      kind: 'tool',
      itemId: 'dirigent/util/echo',
      parameters: { message: 'hi' },
    });
    expect(ran).toMatchObject({ kind: 'tool', dryRun: false, result: { message: 'hi' } });
    const checked = await dirigent.items.execute({
      kind: 'tool',
      itemId: 'dirigent/shell/bash',
      parameters: { command: 'touch made' },
      dryRun: true,
    });
    expect(checked).toMatchObject({ dryRun: true, params: { command: 'touch made' } });
    expect(existsSync(join(project, 'made'))).toBe(false);
    await expect(
      dirigent.items.execute({
        kind: 'tool',
        itemId: 'dirigent/shell/bash',
        parameters: {},
        dryRun: true,
      }),
    ).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
  });

  it('drives a directive through its instruction: the answer resumes it to its end', async () => {
    const first = await dirigent.items.execute({
      kind: 'directive',
      itemId: 'approve',
      parameters: { change: 'v2' },
    });
    expect(first.kind === 'directive' && !first.dryRun && first.run).toMatchObject({
      status: 'waiting',
      waiting: [{ step: 'ask', text: 'Ship v2?' }],
    });
    const runId = (first as { run: { runId: string } }).run.runId;
    const done = await dirigent.items.execute({
      kind: 'directive',
      itemId: 'approve',
      resume: { runId, answer: { answer: 'yes' } },
    });
    expect(done).toMatchObject({
      run: { runId, status: 'completed', outputs: { said: 'answer: yes' } },
    });
    await expect(
      dirigent.items.execute({
        kind: 'directive',
        itemId: 'approve',
        resume: { runId, answer: 1 },
      }),
    ).rejects.toMatchObject({ code: 'RUN_NOT_WAITING' });
  });

  it("checks a directive's inputs with dry_run, starting nothing", async () => {
    const checked = await dirigent.items.execute({
      kind: 'directive',
      itemId: 'approve',
      parameters: { change: 'v3' },
      dryRun: true,
    });
    expect(checked).toMatchObject({ dryRun: true, inputs: { change: 'v3' } });
    expect((await dirigent.list()).runs).toEqual([]);
    await expect(
      dirigent.items.execute({ kind: 'directive', itemId: 'approve', dryRun: true }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUTS' });
  });

  it('refuses an unknown kind and parameters that are not an object', async () => {
    await expect(
      dirigent.items.execute({ kind: 'script' as 'tool', itemId: 'x' }),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    await expect(
      dirigent.items.execute({
        kind: 'tool',
        itemId: 'dirigent/util/echo',
        parameters: [] as never,
      }),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
  });
});

describe('search', () => {
  const ids = (page: { results: { itemId: string; space: string }[] }) =>
    page.results.map((r) => `${r.space}:${r.itemId}`);

  it('follows the files: an edited, a new and a removed item are found as they now are', async () => {
    const file = join(project, '.ai', 'knowledge', 'ops', 'deploys.md');
    expect(ids(await dirigent.items.search({ query: 'weekdays' }))).toEqual([
      'project:ops/deploys',
    ]);
    writeFileSync(file, NOTE.replace('weekdays', 'weekends'));
    await vi.waitFor(async () => {
      expect(ids(await dirigent.items.search({ query: 'weekends' }))).toEqual([
        'project:ops/deploys',
      ]);
    });
    expect((await dirigent.items.search({ query: 'weekdays' })).total).toBe(0);

    write(
      join(project, '.ai', 'knowledge', 'ops', 'rollback.md'),
      '---\nname: rollback\ndescription: Undo a bad release\n---\nRevert the tag.\n',
    );
    await vi.waitFor(async () => {
      expect(ids(await dirigent.items.search({ query: 'rollbak' }))).toEqual([
        'project:ops/rollback',
      ]);
    });
    rmSync(file);
    await vi.waitFor(async () => {
      expect((await dirigent.items.search({ query: 'weekends' })).total).toBe(0);
    });
  });

  it('marks an item a higher space hides, and leaves it out when asked', async () => {
    const itemId = 'rye/core/runtimes/bash/bash';
    await dirigent.items.load({ kind: 'tool', itemId, destination: 'project' });
    await vi.waitFor(async () => {
      const page = await dirigent.items.search({ query: `id:"${itemId}"`, kinds: ['tool'] });
      expect(page.results.map((r) => [r.space, r.shadowed, r.shadowedBy ?? null])).toEqual([
        ['project', false, null],
        ['system', true, 'project'],
      ]);
    });
    const visible = await dirigent.items.search({
      query: `id:"${itemId}"`,
      kinds: ['tool'],
      includeShadowed: false,
    });
    expect(ids(visible)).toEqual([`project:${itemId}`]);
  });

  it('refuses a malformed query with INVALID_QUERY and where it went wrong', async () => {
    await expect(dirigent.items.search({ query: 'deploy AND (ops' })).rejects.toMatchObject({
      code: 'INVALID_QUERY',
    });
  });
});

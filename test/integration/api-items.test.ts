/**
 * The item interface over HTTP (`POST /v1/items/{search,load,execute,sign}`), against a server in
 * this process, embedded: the MCP tools' arguments and answers, the one error shape with the
 * engine's codes, and what only `--full-access` allows (running a tool directly, copying, signing).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { apiClient, apiServers } from '../support/api-server.js';

const servers = apiServers();
let home: string;

const write = (file: string, text: string) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
};

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'dirigent-api-items-home-'));
  vi.stubEnv('DIRIGENT_USER_SPACE', join(home, '.ai'));
  vi.stubEnv('DIRIGENT_SIGNING_KEY_DIR', join(home, 'keys'));
});

afterEach(() => {
  vi.unstubAllEnvs();
  rmSync(home, { recursive: true, force: true });
});

/** The API test project with a knowledge entry and a YAML tool of its own. */
function itemProject(): string {
  const project = servers.project();
  write(
    join(project, '.ai', 'knowledge', 'ops', 'releases.md'),
    '---\nname: releases\ntitle: Shipping releases\ndescription: When and how releases reach production\ncategory: ops\ntags: [deploy, process]\nversion: "2.1.0"\n---\n\nReleases ship on Tuesdays.\n',
  );
  write(
    join(project, '.ai', 'tools', 'text', 'shout.yaml'),
    [
      'version: 1.0.0',
      'tool_type: yaml',
      'executor_id: rye/core/runtimes/bash_runtime',
      'description: Print a word in capitals',
      'config:',
      '  command: echo {word} | tr a-z A-Z',
      'config_schema:',
      '  type: object',
      '  properties: { word: { type: string } }',
      '  required: [word]',
      '',
    ].join('\n'),
  );
  return project;
}

describe('POST /v1/items/search', () => {
  it('ranks items of every kind, forgives typos, filters and pages', async () => {
    const { url } = await servers.listen({ project: itemProject() });
    const api = apiClient(url);

    const typo = await api.post('/v1/items/search', { query: 'relaeses' });
    expect(typo.status, JSON.stringify(typo.body)).toBe(200);
    expect(typo.body.results[0]).toMatchObject({
      item_id: 'ops/releases',
      item_type: 'knowledge',
      space: 'project',
      title: 'Shipping releases',
      version: '2.1.0',
      tags: ['deploy', 'process'],
      score: 1,
      signature: 'unsigned',
      shadowed: false,
    });

    const tools = await api.post('/v1/items/search', {
      query: 'capitals OR sleep',
      item_type: 'tool',
      limit: 1,
    });
    expect(tools.body.total).toBe(2);
    expect(tools.body.results).toHaveLength(1);
    const next = await api.post('/v1/items/search', {
      query: 'capitals OR sleep',
      item_type: 'tool',
      limit: 1,
      offset: 1,
    });
    expect([tools.body.results[0].item_id, next.body.results[0].item_id].sort()).toEqual([
      'dirigent/util/sleep',
      'text/shout',
    ]);

    const ranged = await api.post('/v1/items/search', { version: '^2', item_type: 'all' });
    expect(ranged.body.results.map((r: { item_id: string }) => r.item_id)).toEqual([
      'ops/releases',
    ]);
    const system = await api.post('/v1/items/search', { query: 'shout', source: 'system' });
    expect(system.body.total).toBe(0);
  });

  it('answers a malformed query with 400 INVALID_QUERY, and unknown arguments with 400', async () => {
    const { url } = await servers.listen({ project: itemProject() });
    const api = apiClient(url);
    const bad = await api.post('/v1/items/search', { query: '(deploy AND' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_QUERY');
    expect(bad.body.error.hint).toBeTruthy();
    const range = await api.post('/v1/items/search', { version: 'not a range' });
    expect(range.status).toBe(400);
    const limit = await api.post('/v1/items/search', { limit: 1000 });
    expect(limit.status).toBe(400);
  });
});

describe('POST /v1/items/load and execute', () => {
  it('reads an item, runs a directive, reads knowledge and checks a tool call', async () => {
    const project = itemProject();
    const { url } = await servers.listen({ project });
    const api = apiClient(url);

    const loaded = await api.post('/v1/items/load', { item_type: 'directive', item_id: 'hello' });
    expect(loaded.status).toBe(200);
    expect(loaded.body).toMatchObject({ status: 'success', item_id: 'hello', space: 'project' });
    expect(loaded.body.content).toContain('<render>Hello ${inputs.who}</render>');

    const ran = await api.post('/v1/items/execute', {
      item_type: 'directive',
      item_id: 'hello',
      parameters: { who: 'Ada' },
    });
    expect(ran.body).toMatchObject({ status: 'completed', outputs: { said: 'Hello Ada' } });
    expect(ran.body.run_id).toMatch(/\S/);

    const knowledge = await api.post('/v1/items/execute', {
      item_type: 'knowledge',
      item_id: 'ops/releases',
    });
    expect(knowledge.body.content).toContain('Releases ship on Tuesdays.');
    expect(knowledge.body.data).toMatchObject({ title: 'Shipping releases' });

    // A dry run of a tool only checks, so clients without full access may do it.
    const checked = await api.post('/v1/items/execute', {
      item_type: 'tool',
      item_id: 'text/shout',
      parameters: { word: 'hi' },
      dry_run: true,
    });
    expect(checked.body).toMatchObject({ status: 'valid', params: { word: 'hi' } });
    const invalid = await api.post('/v1/items/execute', {
      item_type: 'tool',
      item_id: 'text/shout',
      parameters: {},
      dry_run: true,
    });
    expect(invalid.status).toBe(422);

    const unknown = await api.post('/v1/items/load', { item_type: 'tool', item_id: 'no/such' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('UNKNOWN_TOOL');
    const other = await api.post('/v1/items/load', {
      item_type: 'directive',
      item_id: 'hello',
      project_path: '/somewhere/else',
    });
    expect(other.status).toBe(400);
  });
});

describe('what only --full-access allows', () => {
  it('refuses running a tool, copying and signing with 403 PERMISSION_DENIED, and changes nothing', async () => {
    const project = itemProject();
    const { url } = await servers.listen({ project });
    const api = apiClient(url);
    const calls = [
      ['execute', { item_type: 'tool', item_id: 'text/shout', parameters: { word: 'hi' } }],
      ['load', { item_type: 'tool', item_id: 'text/shout', destination: 'user' }],
      ['sign', { item_type: 'directive', item_id: 'hello' }],
    ] as const;
    for (const [name, body] of calls) {
      const res = await api.post(`/v1/items/${name}`, body);
      expect(res.status, name).toBe(403);
      expect(res.body.error.code).toBe('PERMISSION_DENIED');
      expect(res.body.error.hint).toMatch(/--full-access/);
    }
    expect(existsSync(join(home, '.ai', 'tools', 'text', 'shout.yaml'))).toBe(false);
    expect(readFileSync(join(project, '.ai', 'directives', 'hello.md'), 'utf8')).not.toMatch(
      /signed:/,
    );
  });

  it('with full access: runs the tool, copies it to the user space, and signs with the key', async () => {
    const project = itemProject();
    const { url } = await servers.listen({ project }, { fullAccess: true });
    const api = apiClient(url);
    const ran = await api.post('/v1/items/execute', {
      item_type: 'tool',
      item_id: 'text/shout',
      parameters: { word: 'hi' },
    });
    expect(ran.status, JSON.stringify(ran.body)).toBe(200);
    expect(JSON.stringify(ran.body.result)).toContain('HI');

    const copied = await api.post('/v1/items/load', {
      item_type: 'tool',
      item_id: 'text/shout',
      destination: 'user',
    });
    expect(copied.body.copied_to).toBe('user');
    expect(readFileSync(copied.body.destination_path, 'utf8')).toBe(
      readFileSync(join(project, '.ai', 'tools', 'text', 'shout.yaml'), 'utf8'),
    );

    // Signing needs a key; without one the error says how to make it.
    const noKey = await api.post('/v1/items/sign', { item_type: 'directive', item_id: 'hello' });
    expect(noKey.body.error.code).toBe('NO_SIGNING_KEY');
    expect(noKey.body.error.hint).toMatch(/dirigent keys init/);
    const { initSigningKey } = await import('../../src/items/signing/key-ring.js');
    await initSigningKey(join(home, 'keys'), { owner: 'tester', trustIn: join(home, '.ai') });
    const signed = await api.post('/v1/items/sign', { item_type: 'directive', item_id: 'hello' });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect(signed.body).toMatchObject({ status: 'signed', item_id: 'hello', space: 'project' });
    const found = await api.post('/v1/items/search', { query: 'id:hello', item_type: 'directive' });
    expect(found.body.results[0].signature).toBe('verified');

    const system = await api.post('/v1/items/sign', {
      item_type: 'directive',
      item_id: 'hello',
      source: 'system',
    });
    expect(system.status).toBe(400);
  });
});

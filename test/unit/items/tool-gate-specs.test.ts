/** Tools of every format declare concurrency limits and rate limits, read without running them. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readToolItem } from '../../../src/items/read-tool-item.js';
import { rejection } from '../tools/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'dirigent-gates-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const read = (name: string, text: string) => {
  const file = join(dir, name);
  writeFileSync(file, text);
  return readToolItem(
    { kind: 'tool', itemId: name, file, space: 'project', shadowed: [], alsoFound: [] },
    dir,
  );
};

describe('concurrency and rate_limit declarations', () => {
  it('are read from YAML, Python and TypeScript tools', async () => {
    const yaml = await read(
      'a.yaml',
      'tool_type: yaml\nexecutor_id: rye/core/runtimes/bash_runtime\ndescription: x\nconcurrency: { key: "repo:${inputs.repo}", limit: 2 }\nrate_limit: { key: api, max: 5, duration_ms: 1000 }\n',
    );
    expect(yaml).toMatchObject({
      concurrency: { key: 'repo:${inputs.repo}', limit: 2, leaseMs: 30_000 },
      rateLimit: { key: 'api', max: 5, durationMs: 1000 },
    });
    const py = await read(
      'b.py',
      'name = "b"\ndescription = "x"\nparameters = {"type": "object"}\nCONCURRENCY = {"key": "k", "limit": 1, "lease_ms": 5000}\nasync def execute(params):\n    return "ok"\n',
    );
    expect(py.concurrency).toEqual({ key: 'k', limit: 1, leaseMs: 5000 });
    const ts = await read(
      'c.ts',
      "export const description = 'x';\nexport const rate_limit = { key: 'api', max: 10, duration_ms: 60000 };\nexport function execute() { return {}; }\n",
    );
    expect(ts.rateLimit).toEqual({ key: 'api', max: 10, durationMs: 60_000 });
  });

  it('are checked: a wrong field is INVALID_TOOL naming it', async () => {
    const err = await rejection(
      read(
        'd.yaml',
        'tool_type: yaml\nexecutor_id: rye/core/runtimes/bash_runtime\ndescription: x\nconcurrency: { key: k, limit: 0 }\n',
      ),
    );
    expect(err.code).toBe('INVALID_TOOL');
    expect(err.message).toContain('concurrency.limit');
    expect(err.location).toMatchObject({ line: 4 });
  });
});

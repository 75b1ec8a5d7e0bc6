/**
 * The embedded run store keeps ended runs for their retention, counted from when they ended:
 * then a run is gone from `.dirigent/runs/` as soon as it is loaded, listed or swept; runs under
 * way or waiting are kept whatever their retention. A sweep looks at a bounded number of files.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileRunStore } from '../../../src/engine/file-run-store.js';
import type { RunStatus } from '../../../src/engine/run-record.js';
import { forgetRetentions } from '../../../src/engine/run-retention.js';
import type { StoredRun } from '../../../src/engine/run-store.js';

const FENCE = '```';
const text = (metadata = '') =>
  `# r\n\n${FENCE}xml\n<directive name="r" version="1.0.0"><metadata><description>d</description>${metadata}</metadata><process><step name="a"><render>x</render></step></process></directive>\n${FENCE}\n`;

let project: string;
let now: number;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-file-store-'));
  now = 1_000_000;
  forgetRetentions();
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

/** A run of directive text `source` that ended (or not) at `endedAt`. */
function runOf(id: string, status: RunStatus, endedAt: number | null, source = text()): StoredRun {
  return {
    record: {
      runId: id,
      directive: 'r',
      status,
      outputs: null,
      steps: [],
      error: null,
      startedAt: (endedAt ?? now) - 10,
      endedAt,
    },
    snapshot: { context: { inputs: {} } },
    source: { file: 'r.md', text: source },
    projectDir: project,
    depth: 0,
    parentRunId: null,
    children: {},
    steps: {},
    counters: { transitions: 0, spawns: 0 },
  };
}

const store = (retentionSeconds = 60) =>
  new FileRunStore(project, { retentionSeconds, now: () => now });
const fileOf = (id: string) => join(project, '.dirigent', 'runs', `${id}.json`);

describe('FileRunStore retention', () => {
  it('keeps an ended run for its retention, then loads and lists it as gone and removes its file', async () => {
    const s = store(60);
    await s.save(runOf('done', 'completed', now));
    now += 59_000;
    expect((await s.load('done'))?.record.status).toBe('completed');
    now += 1000;
    expect(await s.list()).toEqual([]);
    expect(existsSync(fileOf('done'))).toBe(false);
    expect(await s.load('done')).toBeUndefined();
  });

  it('keeps runs under way and waiting runs whatever their retention', async () => {
    const s = store(1);
    await s.save(runOf('going', 'running', null));
    await s.save(runOf('asking', 'waiting', null));
    now += 86_400_000;
    expect((await s.list()).map((r) => r.runId).sort()).toEqual(['asking', 'going']);
  });

  it("counts a directive's <retention days> over the project's, and the project's over the store's", async () => {
    mkdirSync(join(project, '.ai', 'config'), { recursive: true });
    writeFileSync(join(project, '.ai', 'config', 'dirigent.yaml'), 'retention: 2m\n');
    const s = store(3600);
    await s.save(runOf('short', 'failed', now, text('<retention days="0.0001"/>'))); // 8.64 s
    await s.save(runOf('project', 'cancelled', now));
    now += 9000;
    expect((await s.list()).map((r) => r.runId)).toEqual(['project']);
    now += 120_000;
    expect(await s.list()).toEqual([]);
  });

  it('sweeps at most the files asked for, the next ones each time, when an ended run is saved', async () => {
    const s = store(1);
    for (let i = 0; i < 5; i++) await s.save(runOf(`old${i}`, 'completed', now));
    now += 5000;
    expect(await s.sweep(2)).toBe(2);
    expect(await s.sweep(2)).toBe(2);
    expect(await s.sweep(2)).toBe(1);
    const again = store(1);
    for (let i = 0; i < 3; i++) await again.save(runOf(`late${i}`, 'completed', now));
    now += 60_000;
    // A save of an ended run sweeps (once a minute at most): the three expired ones go with it.
    await again.save(runOf('fresh', 'completed', now));
    expect((await again.list()).map((r) => r.runId)).toEqual(['fresh']);
  });
});

/**
 * The project the console's browser tests run: directives that greet, fail a step, fail a step
 * until a file exists (to redrive and rerun), wait for an instruction (one with typed answers),
 * hold a shell tool, linger a minute, show every shape of graph (parallel, foreach, a loop), and
 * run 200 steps; plus a seeder of many stored runs.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RedisClient } from '../../src/redis/redis-client.js';
import { RedisRunStore } from '../../src/redis/run-store/redis-run-store.js';
import type { RunStatus } from '../../src/engine/run-record.js';
import { writeDirective } from './directive-file.js';

const tool = (id: string, params: Record<string, string>) =>
  `<execute item_type="tool" item_id="${id}">${Object.entries(params)
    .map(([k, v]) => `<param name="${k}" value="${v}"/>`)
    .join('')}</execute>`;

/** Writes the project (see the module comment) into a new temporary folder; returns it. */
export function consoleProject(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-console-'));
  const d = join(dir, '.ai', 'directives');
  mkdirSync(d, { recursive: true });
  writeDirective(
    d,
    'greet',
    `<inputs><input name="who" type="string" required="true">Whom to greet</input><input name="times" type="integer" default="1"/></inputs>
  <process><step name="greet"><render>Hello \${inputs.who}</render></step></process>
  <outputs><output name="said" value="\${steps.greet.result}"/></outputs>`,
  );
  writeDirective(
    d,
    'fails',
    `<process>
    <step name="prepare"><render>ready</render></step>
    <step name="broken">${tool('dirigent/shell/bash', { command: 'echo boom; exit 3' })}<retry attempts="2" backoff="fixed" delay_ms="100"/></step>
    <step name="never"><render>unreachable</render></step>
  </process>`,
  );
  // Fails at `mend` until the file `inputs.mend` names exists: redriven or rerun once it does, it
  // completes.
  writeDirective(
    d,
    'flaky',
    `<inputs><input name="mend" type="string" required="true">A file: once it exists, the step passes</input><input name="tries" type="integer" default="1"/></inputs>
  <process>
    <step name="prepare"><render>ready</render><assign name="prepared" expr="true"/></step>
    <step name="mend">${tool('dirigent/shell/bash', { command: 'if [ -f ${inputs.mend} ]; then echo mended; else echo not mended yet; exit 3; fi' })}</step>
    <step name="finish"><render>done</render></step>
  </process>
  <outputs><output name="said" value="\${steps.mend.result}"/></outputs>`,
  );
  writeDirective(
    d,
    'linger',
    `<process><step name="linger">${tool('dirigent/shell/bash', { command: 'sleep 60' })}</step></process>`,
  );
  writeDirective(
    d,
    'ask',
    `<inputs><input name="version" type="string" default="1.0"/></inputs>
  <process>
    <step name="approve"><instruction>Approve the release of \${inputs.version}?</instruction></step>
    <step name="record"><render>approved: \${steps.approve.result}</render></step>
  </process>
  <outputs><output name="answer" value="\${steps.approve.result}"/></outputs>`,
  );
  writeDirective(
    d,
    'release',
    `<process>
    <step name="approve"><instruction>Ship release 3.0?
      <answer name="approved" type="boolean" required="true">Whether it ships</answer>
      <answer name="days" type="integer">Days to wait</answer>
      <answer name="note" type="string"/>
    </instruction></step>
    <step name="go"><wait signal="go"><answer type="boolean">Is the window open?</answer></wait></step>
  </process>
  <outputs><output name="review" value="\${steps.approve.result}"/><output name="open" value="\${steps.go.result}"/></outputs>`,
  );
  writeDirective(
    d,
    'hold',
    `<process><step name="hold">${tool('dirigent/shell/bash', { command: `echo $$ > ${join(dir, 'hold.pid')}; sleep 30` })}</step></process>`,
  );
  writeDirective(
    d,
    'showcase',
    `<inputs><input name="waits" type="array" default="[60, 90, 120]">Milliseconds each item sleeps</input></inputs>
  <process>
    <step name="prepare"><render>start</render><assign name="i" expr="0"/></step>
    <parallel name="fan_out">
      <branch name="left"><step name="left_work">${tool('dirigent/util/sleep', { ms: '150' })}</step></branch>
      <branch name="right"><step name="each_item"><foreach over="\${inputs.waits}" as="ms" parallel="2" collect="slept">${tool('dirigent/util/sleep', { ms: '${ms}' })}</foreach></step></branch>
    </parallel>
    <step name="count_up"><render>tick</render><assign name="i" expr="state.i + 1"/>
      <next><when path="state.i" op="lt" value="3" to="count_up"/><otherwise to="summarise"/></next></step>
    <step name="summarise"><render>counted to \${state.i}</render></step>
  </process>`,
  );
  const steps = Array.from(
    { length: 200 },
    (_, i) =>
      `<step name="s${String(i + 1).padStart(3, '0')}"><render>step ${i + 1}</render></step>`,
  );
  writeDirective(d, 'big', `<process>${steps.join('')}</process>`);
  return dir;
}

/** Stores `count` ended runs of `directive` under `prefix`, as workers would have left them. */
export async function seedRuns(
  redis: RedisClient,
  prefix: string,
  count: number,
  directive: string,
): Promise<void> {
  const store = new RedisRunStore(redis, { prefix, cachedRuns: 0 });
  const statuses: RunStatus[] = ['completed', 'completed', 'completed', 'failed', 'cancelled'];
  const start = Date.now() - count * 1000 - 60_000;
  for (let at = 0; at < count; at += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, count - at) }, (_, k) => {
        const i = at + k;
        const status = statuses[i % statuses.length]!;
        return store.save({
          record: {
            runId: `seeded-${String(i).padStart(6, '0')}`,
            directive,
            status,
            outputs: null,
            steps: [],
            error:
              status === 'failed' ? { code: 'TOOL_FAILED', message: 'seeded', step: null } : null,
            startedAt: start + i * 1000,
            endedAt: start + i * 1000 + 500,
          },
          snapshot: null,
          source: { file: `${directive}.md`, text: '' },
          projectDir: '/seeded',
          depth: 0,
          parentRunId: null,
          children: {},
          steps: {},
          counters: { transitions: 0, spawns: 0 },
        });
      }),
    );
  }
}

/**
 * Rerun from a step: a new run, linked both ways to the old one, that starts at the named step
 * (by default the one that failed) with the old run's inputs, or edited ones validated again,
 * and with the state and step results that existed before that step. The steps before it do not
 * run again. Embedded and on Redis (a worker in this process) alike.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Dirigent } from '../../src/operations/dirigent.js';
import { writeDirective } from '../support/directive-file.js';
import { dirigentModes, MODES } from '../support/dirigent-modes.js';
import { redisForTest } from '../support/redis.js';
import { rejection } from '../support/thrown.js';

const redis = redisForTest();
const modes = dirigentModes(redis);

const bash = (name: string, command: string, inner = '') =>
  `<step name="${name}">${inner}<execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${command}"/></execute></step>`;

/**
 * `order`: `price` writes state.price, `tax` adds to it, `charge` fails for an amount over 100,
 * `receipt` says what was charged. Each step with an effect writes a line to `effects`.
 */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-rerun-'));
  const directives = join(dir, '.ai', 'directives');
  mkdirSync(directives, { recursive: true });
  writeDirective(
    directives,
    'order',
    `<inputs><input name="amount" type="integer" required="true"/><input name="who" type="string" default="ada"/></inputs>
  <process>
    <step name="price"><render>\${inputs.amount}</render><assign name="price" expr="inputs.amount"/></step>
    ${bash('tax', 'echo tax >> effects')}
    <step name="total"><render>total</render><assign name="total" expr="state.price * 2"/></step>
    ${bash('charge', 'echo charge {input:amount} >> effects; test {input:amount} -le 100', '<retry attempts="1"/>')}
    <step name="receipt"><render>\${inputs.who} paid \${state.total} after \${steps.price.result}</render></step>
  </process>
  <outputs><output name="receipt" value="\${steps.receipt.result}"/></outputs>`,
  );
  return dir;
}

const effects = (dir: string) =>
  existsSync(join(dir, 'effects'))
    ? readFileSync(join(dir, 'effects'), 'utf8').trim().split('\n')
    : [];

for (const mode of MODES) {
  describe(`rerun from a step (${mode})`, { timeout: 40_000 }, () => {
    async function open(): Promise<{ dirigent: Dirigent; dir: string }> {
      const dir = project();
      return { dirigent: await modes.open(mode, dir), dir };
    }

    it('starts at the failed step with the state before it; the steps before it do not run again', async () => {
      const { dirigent, dir } = await open();
      const old = await dirigent.run({ directive: 'order', inputs: { amount: 150 } });
      expect(old.status).toBe('failed');
      expect(old.error?.step).toBe('charge');
      // The amount is edited; what the earlier steps made (state.total, the price) is the old run's.
      const handle = await dirigent.rerun(old.runId, { inputs: { amount: 90 } });
      const rerun = await handle.wait();
      expect(rerun.runId).not.toBe(old.runId);
      expect(rerun.status).toBe('completed');
      expect(rerun.rerunOf).toEqual({ runId: old.runId, step: 'charge' });
      expect(rerun.outputs).toEqual({ receipt: 'ada paid 300 after 150' });
      expect(rerun.steps.map((s) => s.name)).toEqual(['charge', 'receipt']);
      expect(effects(dir)).toEqual(['tax', 'charge 150', 'charge 90']);
      // The old run finds its reruns by their tag.
      const { runs } = await dirigent.list({ tags: { 'dirigent.rerun-of': old.runId } });
      expect(runs.map((r) => r.runId)).toEqual([rerun.runId]);
      expect((await dirigent.get(old.runId)).status).toBe('failed');
    });

    it('starts at a named earlier step, which runs again with everything after it', async () => {
      const { dirigent, dir } = await open();
      const old = await dirigent.run({ directive: 'order', inputs: { amount: 20, who: 'bo' } });
      expect(old.status).toBe('completed');
      const rerun = await (await dirigent.rerun(old.runId, { from: 'tax' })).wait();
      expect(rerun.status).toBe('completed');
      expect(rerun.steps.map((s) => s.name)).toEqual(['tax', 'total', 'charge', 'receipt']);
      expect(rerun.outputs).toEqual({ receipt: 'bo paid 40 after 20' });
      expect(effects(dir)).toEqual(['tax', 'charge 20', 'tax', 'charge 20']);
    });

    it('refuses a step it cannot start at, edited inputs that do not fit, and a run that goes on', async () => {
      const { dirigent } = await open();
      const old = await dirigent.run({ directive: 'order', inputs: { amount: 150 } });
      const noStep = await rejection(dirigent.rerun(old.runId, { from: 'nope' }));
      expect(noStep.code).toBe('INVALID_REQUEST');
      expect(noStep.hint).toMatch(/price, tax, total, charge, receipt/);
      const neverRan = await rejection(dirigent.rerun(old.runId, { from: 'receipt' }));
      expect(neverRan.message).toMatch(/never ran/);
      const badInputs = await rejection(dirigent.rerun(old.runId, { inputs: { amount: 'lots' } }));
      expect(badInputs.code).toBe('INVALID_INPUTS');
      const unknown = await rejection(dirigent.rerun('6f1d2c3b-0000-4000-8000-000000000000'));
      expect(unknown.code).toBe('RUN_NOT_FOUND');
    });
  });
}

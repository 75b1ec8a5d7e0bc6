/** The order bootstrap tools start in, the ones refused, and the restart backoff. */
import { describe, expect, it } from 'vitest';
import type { BootstrapTool } from '../../../src/services/bootstrap-tool.js';
import { planBootstrap } from '../../../src/services/plan-bootstrap.js';
import { RestartBackoff } from '../../../src/services/restart-backoff.js';

const tool = (
  itemId: string,
  priority = 50,
  waitFor: string[] = [],
  mode: 'once' | 'continuous' = 'once',
): BootstrapTool => ({
  itemId,
  file: `/p/.ai/tools/${itemId}.yaml`,
  space: 'project',
  hash: 'f'.repeat(64),
  spec: { enabled: true, mode, priority, waitFor, input: {} },
});
const ids = (tools: BootstrapTool[]) => tools.map((t) => t.itemId);

describe('planBootstrap', () => {
  it('starts higher priorities first, ties by item id', () => {
    const plan = planBootstrap([tool('c', 10), tool('b', 50), tool('a', 50), tool('z', 100)]);
    expect(ids(plan.order)).toEqual(['z', 'a', 'b', 'c']);
    expect(plan.refused).toEqual([]);
  });

  it('puts a tool after the tools it waits for, whatever their priority', () => {
    const plan = planBootstrap([
      tool('monitor', 90, ['scheduler'], 'continuous'),
      tool('scheduler', 10, ['migrate'], 'continuous'),
      tool('migrate', 5),
      tool('sync', 50),
    ]);
    expect(ids(plan.order)).toEqual(['sync', 'migrate', 'scheduler', 'monitor']);
  });

  it('refuses a tool waiting for one that is not a bootstrap tool, and whoever waits for it', () => {
    const plan = planBootstrap([tool('a', 50, ['nope']), tool('b', 50, ['a']), tool('c')]);
    expect(ids(plan.order)).toEqual(['c']);
    const [a, b] = plan.refused;
    expect(a!.tool.itemId).toBe('a');
    expect(a!.error.message).toBe(
      'bootstrap tool "a" waits for "nope", which is not a bootstrap tool: it will not start.',
    );
    expect(b!.error.message).toContain('bootstrap tool "b" waits for "a", which will not start');
  });

  it('reports cycles and does not start them', () => {
    const plan = planBootstrap([
      tool('a', 50, ['b']),
      tool('b', 50, ['c']),
      tool('c', 50, ['a']),
      tool('self', 50, ['self']),
      tool('after', 50, ['c']),
      tool('free'),
    ]);
    expect(ids(plan.order)).toEqual(['free']);
    const messages = Object.fromEntries(plan.refused.map((r) => [r.tool.itemId, r.error.message]));
    expect(messages.a).toContain('is on a cycle of wait_for (a → b → c → a)');
    expect(messages.self).toContain('is on a cycle of wait_for (self → self)');
    expect(messages.after).toContain('waits for "c", which will not start');
  });
});

describe('RestartBackoff', () => {
  it('grows from 1 s to 30 s on failures in a row and resets after a long run', () => {
    const b = new RestartBackoff();
    expect([1, 2, 3, 4, 5, 6, 7].map(() => b.next(true, 10))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000,
    ]);
    expect(b.next(true, 60_000)).toBe(1000);
    expect(b.next(false, 10)).toBe(1000);
  });
});

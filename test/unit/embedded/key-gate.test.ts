/** The slots of a concurrency key in one process: held up to the limit, handed on in start order. */
import { describe, expect, it } from 'vitest';
import { KeyGate } from '../../../src/embedded/key-gate.js';

describe('a key gate', () => {
  it('lets `limit` runs in, queues the rest in order, and hands each freed slot to the next', () => {
    const gate = new KeyGate();
    const began: string[] = [];
    const enter = (id: string) => gate.enter('k', 2, id, () => began.push(id));
    expect([enter('a'), enter('b'), enter('c'), enter('d'), enter('e')]).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(gate.drop('d')).toBe(true);
    expect(gate.drop('zz')).toBe(false);
    gate.leave('k');
    gate.leave('k');
    expect(began).toEqual(['c', 'e']);
    // Another key is not held by this one.
    expect(gate.enter('other', 1, 'x', () => undefined)).toBe(true);
  });
});

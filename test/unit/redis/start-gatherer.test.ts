import { describe, expect, it } from 'vitest';
import { StartGatherer } from '../../../src/redis/client/start-gatherer.js';

/** A gatherer whose groups are recorded, each start's id its value with the group's number. */
function gatherer(
  maxRuns: number,
  fail?: (group: readonly string[]) => boolean,
  maxWeight?: number,
) {
  const groups: string[][] = [];
  const g = new StartGatherer<string>(
    maxRuns,
    async (starts) => {
      groups.push([...starts]);
      if (fail?.(starts)) throw new Error('queue away');
      return starts.map((s) => `${s}@${groups.length}`);
    },
    (s) => s.length,
    maxWeight,
  );
  return { g, groups };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('gathering starts', () => {
  it('sends the starts of one turn together, and each later turn on its own', async () => {
    const { g, groups } = gatherer(10);
    const first = await Promise.all(['a', 'b', 'c'].map((s) => g.add(s)));
    expect(first).toEqual(['a@1', 'b@1', 'c@1']);
    expect(await g.add('d')).toBe('d@2');
    expect(groups).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('sends a group as soon as it is full, and the rest after the turn', async () => {
    const { g, groups } = gatherer(2);
    const ids = Promise.all(['a', 'b', 'c', 'd', 'e'].map((s) => g.add(s)));
    expect(groups).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    expect(await ids).toEqual(['a@1', 'b@1', 'c@2', 'd@2', 'e@3']);
  });

  it('starts a new group before one would carry more than its weight, past its first start', async () => {
    const { g, groups } = gatherer(10, undefined, 5);
    await Promise.all(['aa', 'bbb', 'c', 'dddddddd', 'e'].map((s) => g.add(s)));
    expect(groups).toEqual([['aa', 'bbb'], ['c'], ['dddddddd'], ['e']]);
  });

  it('weighs no start that is sent alone, and each of a group once', async () => {
    const weighed: string[] = [];
    const g = new StartGatherer<string>(
      10,
      async (starts) => starts.map((s) => s),
      (s) => (weighed.push(s), s.length),
      5,
    );
    await g.add('alone');
    expect(weighed).toEqual([]);
    await Promise.all(['aa', 'bbb', 'cccc', 'd'].map((s) => g.add(s)));
    expect(weighed).toEqual(['aa', 'bbb', 'cccc', 'd']);
  });

  it('fails every start of a group that could not be sent, and only those', async () => {
    const { g } = gatherer(2, (group) => group.includes('b'));
    const outcomes = await Promise.allSettled(['a', 'b', 'c'].map((s) => g.add(s)));
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
  });

  it('sends what is gathered when settled, without waiting for the turn', async () => {
    const { g, groups } = gatherer(10);
    const id = g.add('a');
    await g.settle();
    expect(groups).toEqual([['a']]);
    expect(await id).toBe('a@1');
    await turn();
    expect(groups).toHaveLength(1);
  });
});

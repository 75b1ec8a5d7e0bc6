/** RunSaver: a directive's text goes with a save once per store, and again when asked for. */
import { describe, expect, it } from 'vitest';
import { RunSaver } from '../../../src/redis/run-store/run-saver.js';
import type { Args } from '../../../src/redis/run-store/run-store-scripts.js';

/** A store whose save script answers `replies` in turn, recording the text argument of each call. */
function storeAnswering(...replies: [string, number][]) {
  const texts: unknown[] = [];
  const store = {
    prefix: 'p',
    retentionSeconds: 60,
    runKey: (id: string) => `p:run:${id}`,
    feedKey: (id: string) => `p:run:${id}:feed`,
    indexKey: () => 'p:runs',
    redis: {
      dirigentSaveRun: (...args: Args) => {
        // After the number of keys and the keys, the 14th argument: '=' and the text, or ''.
        texts.push(args[1 + Number(args[0]) + 13]);
        return Promise.resolve(replies.shift() ?? ['ok', 1]);
      },
    },
  };
  return { store: store as unknown as ConstructorParameters<typeof RunSaver>[0], texts };
}

const run = {
  record: { runId: 'r1', status: 'running' as const, directive: 'd', startedAt: 1 },
  source: { file: 'd.md', text: 'TEXT', hash: 'h' },
};
const write = () => ({
  baseEtag: '',
  etag: 'e',
  removed: [],
  set: new Map([['meta', '{}']]),
});

describe('RunSaver', () => {
  it('sends a text once, and again when the script says it is no longer kept', async () => {
    const { store, texts } = storeAnswering(['ok', 1], ['needtext', 1], ['ok', 2]);
    const saver = new RunSaver(store, () => '', 'me');
    expect(await saver.send('full', run, undefined, write())).toEqual(['ok', 1]);
    expect(await saver.send('full', run, undefined, write())).toEqual(['ok', 2]);
    expect(texts).toEqual(['=TEXT', '', '=TEXT']);
  });

  it('rejects a save that asks again for the text it was just sent: nothing was written', async () => {
    const { store } = storeAnswering(['needtext', 0], ['needtext', 0]);
    const saver = new RunSaver(store, () => '', 'me');
    await expect(saver.send('full', run, undefined, write())).rejects.toMatchObject({
      code: 'INTERNAL',
      message: expect.stringContaining('Run r1 was not saved'),
    });
  });
});

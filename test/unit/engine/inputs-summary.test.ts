/**
 * A run's inputs in a few words, for the lines of a run list: `name=value` pairs in the order
 * given, texts as they are (their first line), a list as its length and an object as its first
 * keys (never read whole), each value and the whole capped with an ellipsis.
 */
import { describe, expect, it } from 'vitest';
import { inputsSummary, MAX_SUMMARY, MAX_VALUE } from '../../../src/engine/inputs-summary.js';

describe('inputsSummary', () => {
  it('says each input as name=value: texts as they are, a list as its length, an object as its keys', () => {
    expect(
      inputsSummary({
        customer: 'c7',
        amount: 12,
        express: true,
        none: null,
        items: [1, 2],
        one: ['x'],
        address: { street: 's', city: 'c', zip: 'z', country: 'k' },
      }),
    ).toBe(
      'customer=c7, amount=12, express=true, none=null, items=[2 items], one=[1 item], address={street, city, zip, …}',
    );
  });

  it('has nothing to say of a run without inputs', () => {
    expect(inputsSummary({})).toBeUndefined();
  });

  it('keeps the first line of a text, and caps each value and the whole', () => {
    expect(inputsSummary({ note: 'first\nsecond' })).toBe('note=first');
    const long = inputsSummary({ text: 'x'.repeat(500) })!;
    expect(long).toBe(`text=${'x'.repeat(MAX_VALUE - 1)}…`);
    const many = inputsSummary(
      Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`input${i}`, 'value'])),
    )!;
    expect(many).toHaveLength(MAX_SUMMARY);
    expect(many.endsWith('…')).toBe(true);
  });
});

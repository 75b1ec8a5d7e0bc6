/** A child directive's run id: the same for the same parent and call, a UUID in shape. */
import { describe, expect, it } from 'vitest';
import { childRunId } from '../../../src/engine/child-run-id.js';

describe('childRunId', () => {
  it('is the same for the same parent and call, and differs for any other', () => {
    const id = childRunId('parent-1', 'call.1.1');
    expect(childRunId('parent-1', 'call.1.1')).toBe(id);
    const others = [
      childRunId('parent-2', 'call.1.1'),
      childRunId('parent-1', 'call.1.2'),
      childRunId('parent-1', 'call.2.1'),
      childRunId('parent-1', 'call.1.1.0.1'),
    ];
    expect(new Set([id, ...others]).size).toBe(5);
  });

  it('looks like any run id: a UUID (version 8, RFC 9562 variant)', () => {
    expect(childRunId('p', 'c')).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });
});

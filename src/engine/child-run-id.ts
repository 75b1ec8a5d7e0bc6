/**
 * The run id of a child directive: derived from its parent's run id and the call that starts it
 * (the step's entry and try, as tool calls' job ids are), so that a parent resumed after its
 * worker died starts the same child again, or finds it, instead of a second one. It ends with its
 * parent's affinity (`run-affinity.ts`): a child lives on its parent's shard.
 */
import { hash } from 'node:crypto';
import { affinityDigits, runAffinity } from './run-affinity.js';

/** A UUID-shaped id (version 8, RFC 9562) from `parentRunId` and `callId`, of its affinity. */
export function childRunId(parentRunId: string, callId: string): string {
  const h = hash('sha256', `${parentRunId}\0${callId}`, 'hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 24)}${affinityDigits(runAffinity(parentRunId))}`;
}

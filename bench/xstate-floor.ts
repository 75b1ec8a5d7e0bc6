/**
 * The least one xstate step can cost: a live actor with one state whose event runs one `assign`
 * (the "live actor step" figure of DESIGN.md). Every engine step makes at least one such
 * transition, so this is the floor under the engine's overhead.
 */
import { assign, createActor, setup } from 'xstate';

/** Returns a function that sends `batch` events to one long-lived minimal actor. */
export function xstateFloor(batch: number): () => void {
  const machine = setup({
    types: {} as { context: { n: number }; events: { type: 'tick' } },
    actions: { count: assign(({ context }) => ({ n: context.n + 1 })) },
  }).createMachine({
    context: { n: 0 },
    initial: 'idle',
    states: { idle: { on: { tick: { actions: 'count' } } } },
  });
  const actor = createActor(machine).start();
  const tick = { type: 'tick' } as const;
  return () => {
    for (let i = 0; i < batch; i++) actor.send(tick);
  };
}

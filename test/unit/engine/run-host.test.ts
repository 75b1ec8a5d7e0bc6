/**
 * A run needs nothing of the engine but its {@link RunHost} port: here a plain fake hosts one,
 * records what the run asks of it, and answers the tool calls itself.
 */
import { describe, expect, it } from 'vitest';
import type { RunMachine } from '../../../src/compiler/machine-logic.js';
import { ActiveRun } from '../../../src/engine/active-run.js';
import { DirectiveLoader } from '../../../src/engine/directive-loader.js';
import { provideRunEffects } from '../../../src/engine/run-effects.js';
import type { RunHost, StorableRun } from '../../../src/engine/run-host.js';
import type { StoredRun } from '../../../src/engine/run-store.js';
import { toStoredRun } from '../../../src/engine/to-stored-run.js';
import type { ToolCall } from '../../../src/tools/tool-call.js';

const text = `# greet

\`\`\`xml
<directive name="greet" version="1.0.0">
  <inputs><input name="who" type="string"/></inputs>
  <process>
    <step name="hello">
      <execute item_type="tool" item_id="fake/hello"><param name="who" value="\${inputs.who}"/></execute>
    </step>
    <step name="shout"><render>\${steps.hello.result.greeting}!</render></step>
  </process>
  <outputs><output name="text" value="\${steps.shout.result}"/></outputs>
</directive>
\`\`\`
`;

/** A host that keeps what the run stores, the calls it makes and when it leaves. */
class FakeHost implements RunHost {
  readonly projectDir = '/project';
  readonly env = {};
  readonly observer = undefined;
  readonly durable = false;
  readonly telemetry = undefined;
  readonly calls: ToolCall[] = [];
  /** Nothing is paused. */
  isPaused = () => false;
  readonly saved: StoredRun[] = [];
  readonly left: string[] = [];
  readonly byActor = new WeakMap<object, ActiveRun>();
  readonly dispatcher = {
    describe: () => undefined,
    dispatch: (call: ToolCall) => {
      this.calls.push(call);
      return Promise.resolve({ greeting: `hello ${String(call.params.who)}` });
    },
  };

  providedMachine(machine: RunMachine): RunMachine {
    return provideRunEffects(machine, (actor) => this.byActor.get(actor as object)!);
  }
  persist(run: StorableRun): Promise<void> {
    this.saved.push(structuredClone(toStoredRun(run, this.projectDir)));
    return Promise.resolve();
  }
  activeRun = () => undefined;
  unregister(runId: string): void {
    this.left.push(runId);
  }
  startChild(): never {
    throw new Error('no child directives here');
  }
  cancel(): void {}
  trackWork(): void {}
}

describe('ActiveRun on a plain RunHost', () => {
  it('runs its steps through the host, stores its end through it and leaves it', async () => {
    const host = new FakeHost();
    const loaded = new DirectiveLoader(process.cwd()).fromText('greet.md', text);
    const lineage = { depth: 0, maxDepth: 10, parentRunId: null };
    const run = new ActiveRun(host, loaded, lineage, 'run-1', {
      inputs: { who: 'Ada' },
      trigger: 'library',
    });
    host.byActor.set(run.actor, run);
    run.begin();
    const record = await run.settled();

    expect(record).toMatchObject({ status: 'completed', outputs: { text: 'hello Ada!' } });
    expect(host.calls.map((c) => [c.itemId, c.params, c.callId])).toEqual([
      ['fake/hello', { who: 'Ada' }, 'hello.1.1'],
    ]);
    expect(host.saved).toHaveLength(1);
    expect(host.saved[0]).toMatchObject({
      record: { runId: 'run-1', status: 'completed' },
      source: { file: 'greet.md', text },
      projectDir: '/project',
      depth: 0,
      parentRunId: null,
      counters: { transitions: 2, spawns: 0 },
    });
    expect(host.left).toEqual(['run-1']);
  });
});

/**
 * The directives of the chaos run, written into a project: sequences, a foreach, a retry, a wait
 * for a signal and a child directive. Every step's tool records its side effect in `effects.log`
 * at most once per run and step (an atomic `mkdir` guard keyed by the run's `key` input: the step
 * is idempotent, as a tool that may run again after a lost worker must be), and every call it
 * makes in `calls.log`, so the check can tell effects lost from calls repeated.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A kind of run the chaos run starts, with the effects a run of it must leave. */
export interface ChaosKind {
  /** The directive's item id (and file name). */
  id: string;
  /** The `<process>` and the rest of the directive body. */
  xml: string;
  /** The effects one run leaves, by its key: `<key> <effect>` lines of `effects.log`. */
  effects: (key: string) => string[];
  /** Whether the run waits for the signal `ask` (payload: anything). */
  waits: boolean;
}

/**
 * The retry policy of every step that leaves an effect. A worker is killed every few seconds, and
 * a call lost with its worker counts as an attempt (`WORKER_LOST`); a call made again often lands
 * on the worker just started in place of a killed one, which is as likely as any to be killed
 * next. So the default three attempts can all be lost in a five-minute run (it happened about once
 * in four full runs), and the run then fails with `WORKER_LOST`, as the guarantees say it must.
 * Six attempts make that too rare to see, so that the check counts only what recovery loses.
 */
const CHAOS_RETRY = `<retry attempts="6" backoff="fixed" delay_ms="200"/>`;

/** A bash step that leaves effect `name` once per run (and records every call). */
function effectStep(name: string, effect: string, extra = CHAOS_RETRY): string {
  const cmd = `mkdir -p fx; if mkdir fx/\${inputs.key}.${effect} 2&gt;/dev/null; then echo \${inputs.key} ${effect} &gt;&gt; effects.log; fi; echo \${inputs.key} ${effect} &gt;&gt; calls.log; sleep 0.2`;
  return `<step name="${name}">${extra}<execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="${cmd}"/></execute></step>`;
}

const KEY_INPUT = `<inputs><input name="key" type="string"/></inputs>`;

/** The kinds of runs, in the proportions they are started (each once per round of kinds). */
export const CHAOS_KINDS: readonly ChaosKind[] = [
  {
    id: 'chaos_seq',
    xml: `${KEY_INPUT}<process>${effectStep('a', 'a')}${effectStep('b', 'b')}${effectStep('c', 'c')}</process>`,
    effects: (k) => [`${k} a`, `${k} b`, `${k} c`],
    waits: false,
  },
  {
    id: 'chaos_foreach',
    xml: `${KEY_INPUT}<process><step name="each">${CHAOS_RETRY}<foreach over="\${inputs.items}" as="n" parallel="3"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="mkdir -p fx; if mkdir fx/\${inputs.key}.f\${n} 2&gt;/dev/null; then echo \${inputs.key} f\${n} &gt;&gt; effects.log; fi; echo \${inputs.key} f\${n} &gt;&gt; calls.log; sleep 0.2"/></execute></foreach></step></process>`.replace(
      KEY_INPUT,
      `<inputs><input name="key" type="string"/><input name="items" type="array" default="[1, 2, 3]"/></inputs>`,
    ),
    effects: (k) => [`${k} f1`, `${k} f2`, `${k} f3`],
    waits: false,
  },
  {
    id: 'chaos_retry',
    xml: `${KEY_INPUT}<process><step name="flaky"><retry attempts="7" backoff="fixed" delay_ms="200"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="mkdir -p fx; if mkdir fx/\${inputs.key}.try 2&gt;/dev/null; then exit 1; fi; if mkdir fx/\${inputs.key}.r 2&gt;/dev/null; then echo \${inputs.key} r &gt;&gt; effects.log; fi; echo \${inputs.key} r &gt;&gt; calls.log"/></execute></step></process>`,
    effects: (k) => [`${k} r`],
    waits: false,
  },
  {
    id: 'chaos_wait',
    xml: `${KEY_INPUT}<process>${effectStep('pre', 'pre')}<step name="ask"><instruction>Go on?</instruction></step>${effectStep('post', 'post')}</process>`,
    effects: (k) => [`${k} pre`, `${k} post`],
    waits: true,
  },
  {
    id: 'chaos_parent',
    xml: `<metadata><limits depth="2" spawns="2"/></metadata>${KEY_INPUT}<process>${effectStep('pre', 'pp')}<step name="child"><execute item_type="directive" item_id="chaos_seq"><param name="key" value="\${inputs.key}-c"/></execute></step>${effectStep('post', 'pq')}</process>`,
    effects: (k) => [`${k} pp`, `${k}-c a`, `${k}-c b`, `${k}-c c`, `${k} pq`],
    waits: false,
  },
];

/** Writes the chaos directives into `project`'s `.ai/directives/`; resolves with their files. */
export function writeChaosDirectives(project: string): Map<string, string> {
  const dir = join(project, '.ai', 'directives');
  mkdirSync(dir, { recursive: true });
  const files = new Map<string, string>();
  for (const kind of CHAOS_KINDS) {
    const file = join(dir, `${kind.id}.md`);
    writeFileSync(
      file,
      `# ${kind.id}\n\nA directive of the chaos run.\n\n\`\`\`xml\n<directive name="${kind.id}" version="1.0.0">\n${kind.xml}\n</directive>\n\`\`\`\n`,
    );
    files.set(kind.id, file);
  }
  return files;
}

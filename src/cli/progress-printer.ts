import { describeAnswer, exampleAnswer } from '../directive/answer-spec.js';
import type { EngineObserver } from '../engine/engine-options.js';
import type { RunRecord } from '../engine/run-record.js';

/** Prints each step as it starts and ends, for a person at a terminal. */
export function progressPrinter(write: (line: string) => void): EngineObserver {
  return {
    stepStarted: (_run, step, attempt) =>
      write(`▸ ${step}${attempt > 1 ? ` (attempt ${attempt})` : ''}`),
    stepEnded: (_run, e) => {
      const mark = e.status === 'completed' ? '✓' : e.status === 'skipped' ? '–' : '✗';
      const err = e.error ? `: ${e.error.message} [${e.error.code}]` : '';
      write(
        `${mark} ${e.name} ${e.status} in ${formatMs(e.durationMs)}${e.attempts > 1 ? ` after ${e.attempts} attempts` : ''}${err}`,
      );
    },
    stepRetrying: (_run, step, error, delayMs) =>
      write(`↻ ${step} failed: ${error.message} [${error.code}]; retrying in ${formatMs(delayMs)}`),
    runRedriven: (_run, r) =>
      write(`↺ redriven by ${r.by}${r.steps.length > 0 ? ` from ${r.steps.join(', ')}` : ''}`),
  };
}

/** The closing summary: status, outputs or error, and how to resume a waiting run. */
export function printOutcome(record: RunRecord, write: (line: string) => void): void {
  const took = record.endedAt ? ` in ${formatMs(record.endedAt - record.startedAt)}` : '';
  write(`\nrun ${record.runId} ${record.status}${took}`);
  if (record.status === 'completed' && record.outputs && Object.keys(record.outputs).length > 0) {
    write('outputs:');
    for (const [k, v] of Object.entries(record.outputs))
      write(`  ${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  }
  if (record.error)
    write(
      `error: ${record.error.message} [${record.error.code}]${record.error.step ? ` at step "${record.error.step}"` : ''}`,
    );
  if (record.status === 'paused')
    write(
      `paused: its directive is paused; the run goes on once it is resumed: dirigent resume ${record.directive}`,
    );
  for (const w of record.waiting ?? []) {
    if (w.text) write(`\nstep "${w.step}" asks:\n${indent(w.text)}`);
    if (w.answer) write(`its answer: ${describeAnswer(w.answer)}`);
    const payload = w.answer ? JSON.stringify(exampleAnswer(w.answer)) : '<json>';
    write(
      `waiting for signal "${w.signal}": dirigent signal ${record.runId} ${w.signal} --payload '${payload}'`,
    );
  }
}

/** `12ms`, `1.5s`. */
export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

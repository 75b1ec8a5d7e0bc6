/**
 * docs/benchmarks.md after a run of some sections only (`BENCH_SECTIONS=tools npm run bench`):
 * each section measured replaces the one of the same title, or is added at the end; the others
 * stay as the last full run wrote them. Pure.
 */
import { markdownTable } from './benchmark-report.js';
import type { BenchSection } from './bench-section.js';

/** `report` (the page as it is) with `sections` written in; `when` says when they were measured. */
export function mergeSections(
  report: string,
  sections: readonly BenchSection[],
  when: string,
): string {
  let out = report.trimEnd();
  for (const s of sections) {
    const block = [
      `## ${s.title}`,
      '',
      markdownTable(s.rows),
      '',
      ...s.notes.flatMap((n) => [n, '']),
      `This section was measured on its own (${when}); the others are from the last full run.`,
    ].join('\n');
    const start = out.indexOf(`\n## ${s.title}\n`);
    if (start === -1) {
      out = `${out}\n\n${block}`;
      continue;
    }
    const next = out.indexOf('\n## ', start + 1);
    out = `${out.slice(0, start + 1)}${block}${next === -1 ? '' : `\n${out.slice(next)}`}`;
  }
  return `${out}\n`;
}

/** The benchmark results as Markdown: the table printed by `npm run bench` and docs/benchmarks.md. */
import type { BenchRow } from './bench-row.js';
import type { BenchSection } from './bench-section.js';

/** Where and how the figures were taken. */
export interface ReportContext {
  date: Date;
  node: string;
  cpus: number;
  cpuModel: string;
  rounds: number;
  /** 1-minute load averages when the benchmark started and ended: other work on the machine. */
  load: [number, number];
}

/** The Markdown table of `rows`. */
export function markdownTable(rows: readonly BenchRow[]): string {
  const head = [
    '| benchmark | µs per op (median) | range over rounds | rate | against its baseline, same run | goal | met |',
    '|---|--:|--:|--:|---|---|:-:|',
  ];
  const lines = rows.map((r) =>
    [
      '',
      ` ${r.name} `,
      ` ${fixed(r.us)} `,
      ` ${fixed(r.range[0])}–${fixed(r.range[1])} `,
      ` ${Math.round(r.rate).toLocaleString('en-US')} ${r.unit} `,
      ` ${r.comparison} `,
      ` ${r.goal} `,
      ` ${r.met === undefined ? '' : r.met ? 'yes' : '**no**'} `,
      '',
    ].join('|'),
  );
  return [...head, ...lines].join('\n');
}

/** The whole docs/benchmarks.md page. */
export function benchmarkReport(sections: readonly BenchSection[], ctx: ReportContext): string {
  const date = ctx.date.toISOString().slice(0, 10);
  return [
    '# Benchmarks',
    '',
    `Measured ${date} with Node ${ctx.node} on ${ctx.cpus} × ${ctx.cpuModel}, by \`npm run bench\`` +
      ` (tinybench, ${ctx.rounds} interleaved rounds; load average ${ctx.load[0].toFixed(1)} at the start,` +
      ` ${ctx.load[1].toFixed(1)} at the end). This file is rewritten by every run.`,
    '',
    'How to read the ratios: each subject is timed in the same rounds as its baseline, and a ratio or' +
      ' overhead is the median of the per-round ones, so machine noise moves both sides together;' +
      ' the absolute figures (and their range over rounds) are only as steady as the machine.',
    '',
    ...sections.flatMap((s) => [
      `## ${s.title}`,
      '',
      markdownTable(s.rows),
      '',
      ...s.notes.flatMap((n) => [n, '']),
    ]),
  ].join('\n');
}

function fixed(us: number): string {
  return us >= 100
    ? us.toFixed(0)
    : us >= 10
      ? us.toFixed(1)
      : us >= 1
        ? us.toFixed(2)
        : us.toFixed(3);
}

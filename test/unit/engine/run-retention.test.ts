/**
 * How long an ended run is kept: the project's `retention` (a duration, in
 * `.ai/config/dirigent.yaml`), a directive's `<retention days>` (which wins), else the store's
 * default; and the readings of each, with a located error for a malformed one.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { parseDirective } from '../../../src/directive/parse-directive.js';
import { forgetRetentions, runRetentionSeconds } from '../../../src/engine/run-retention.js';
import { ErrorCode } from '../../../src/errors/index.js';
import { formatDuration, parseDuration } from '../../../src/policy/duration.js';
import { parsePolicy } from '../../../src/policy/project-policy.js';
import { parseTimeOption } from '../../../src/cli/time-option.js';
import { thrown } from '../../support/thrown.js';

const FENCE = '```';
/** A directive whose `<metadata>` holds `metadata`, on line 4 of its file. */
const directive = (metadata: string) =>
  `# r\n\n${FENCE}xml\n<directive name="r" version="1.0.0"><metadata><description>d</description>${metadata}</metadata><process><step name="a"><render>x</render></step></process></directive>\n${FENCE}\n`;

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
beforeEach(() => forgetRetentions());

function projectWith(config: string | undefined): string {
  const dir = mkdtempSync(join(tmpdir(), 'dirigent-retention-'));
  dirs.push(dir);
  if (config !== undefined) {
    mkdirSync(join(dir, '.ai', 'config'), { recursive: true });
    writeFileSync(join(dir, '.ai', 'config', 'dirigent.yaml'), config);
  }
  return dir;
}

describe('durations', () => {
  it.each([
    ['7d', 604_800],
    ['12h', 43_200],
    ['30m', 1800],
    ['45s', 45],
    ['1.5d', 129_600],
    ['2w', 1_209_600],
    ['3600', 3600],
    [' 2 h ', 7200],
    [90, 90],
  ])('reads %j as %d seconds', (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each(['', 'soon', '7 days', '-1d', '1y', 'd', '1e3', Number.NaN, -5])(
    'reads %j as no duration',
    (text) => {
      expect(parseDuration(text)).toBeUndefined();
    },
  );

  it('writes seconds in the largest unit that holds them whole', () => {
    expect([604_800, 86_400 * 30, 43_200, 1800, 90].map(formatDuration)).toEqual([
      '1w',
      '30d',
      '12h',
      '30m',
      '90s',
    ]);
  });
});

describe('retention in the project configuration', () => {
  it.each([
    ['retention: 7d\n', 604_800],
    ['retention: 12h\n', 43_200],
    ['retention: 30m\n', 1800],
    ['retention: 3600\n', 3600],
  ])('reads %j', (text, seconds) => {
    expect(parsePolicy(text, 'dirigent.yaml').retentionSeconds).toBe(seconds);
  });

  it('is not set when the file does not say (the store keeps its default, 7 days)', () => {
    expect(parsePolicy('strict: true\n', 'dirigent.yaml').retentionSeconds).toBeUndefined();
  });

  it.each([
    ['strict: false\nretention: soon\n', 2],
    ['retention: 0\n', 1],
    ['retention: -3d\n', 1],
    ['retention: [7d]\n', 1],
  ])('refuses %j with INVALID_CONFIG at its line, saying how to write one', (text, line) => {
    const err = thrown(() => parsePolicy(text, '/p/.ai/config/dirigent.yaml'));
    expect(err.code).toBe(ErrorCode.INVALID_CONFIG);
    expect(err.message).toContain('"retention" must be a duration');
    expect(err.message).toContain('/p/.ai/config/dirigent.yaml');
    expect(err.location).toMatchObject({ file: '/p/.ai/config/dirigent.yaml', line });
    expect(err.hint).toContain('retention: 30d');
  });
});

describe('<retention days> in a directive', () => {
  it.each([
    ['30', 2_592_000],
    ['0.5', 43_200],
    ['0.00002', 1.728],
  ])('reads days="%s" as %d seconds', (days, seconds) => {
    const d = parseDirective(directive(`<retention days="${days}"/>`), 'r.md');
    expect(d.runSettings.retentionSeconds).toBeCloseTo(seconds, 6);
  });

  it.each(['0', '-1', 'a week', '1e9'])(
    'refuses days="%s" with INVALID_ATTRIBUTE at the attribute, saying how to write one',
    (days) => {
      const text = directive(`<retention days="${days}"/>`);
      const err = thrown(() => parseDirective(text, 'r.md'));
      expect(err.code).toBe(ErrorCode.INVALID_ATTRIBUTE);
      expect(err.message).toContain('a retention is a positive number of days');
      const line = text.split('\n')[3]!;
      expect(err.location).toEqual({ file: 'r.md', line: 4, column: line.indexOf('days=') + 1 });
      expect(err.hint).toContain('<retention days="30"/>');
    },
  );

  it('refuses a second <retention> (DUPLICATE_SETTING) and one without days (MISSING_ATTRIBUTE)', () => {
    const twice = thrown(() =>
      parseDirective(directive('<retention days="1"/><retention days="2"/>'), 'r.md'),
    );
    expect(twice.code).toBe(ErrorCode.DUPLICATE_SETTING);
    for (const empty of ['<retention/>', '<retention days=""/>'])
      expect(thrown(() => parseDirective(directive(empty), 'r.md')).code).toBe(
        ErrorCode.MISSING_ATTRIBUTE,
      );
  });
});

describe("a run's retention", () => {
  const run = (text: string, projectDir: string) => ({ source: { text }, projectDir });

  it("is the directive's, over the project's, over the store's default", () => {
    const project = projectWith('retention: 12h\n');
    const bare = projectWith(undefined);
    expect(runRetentionSeconds(run(directive('<retention days="2"/>'), project), 60)).toBe(172_800);
    expect(runRetentionSeconds(run(directive(''), project), 60)).toBe(43_200);
    expect(runRetentionSeconds(run(directive(''), bare), 60)).toBe(60);
  });

  it("falls back to the store's default when the configuration or the directive no longer reads", () => {
    const broken = projectWith('retention: soon\n');
    expect(runRetentionSeconds(run(directive(''), broken), 60)).toBe(60);
    expect(runRetentionSeconds(run('no fence here', projectWith(undefined)), 60)).toBe(60);
  });

  it('reads a directive that the default checks refuse for other reasons', () => {
    // An environment variable the default policy does not allow: refused, but read whole.
    const text = directive('<retention days="1"/>').replace(
      '<render>x</render>',
      '<render>{env:SECRET_X}</render>',
    );
    expect(runRetentionSeconds(run(text, projectWith(undefined)), 60)).toBe(86_400);
  });
});

describe('--since and --until', () => {
  const now = Date.UTC(2025, 0, 31, 12);

  it('take an ISO date, epoch milliseconds, or a duration back from now', () => {
    expect(parseTimeOption('2025-01-30T12:00:00Z', '--since', now)).toBe(now - 86_400_000);
    expect(parseTimeOption('1738324800000', '--since', now)).toBe(1_738_324_800_000);
    expect(parseTimeOption('24h', '--since', now)).toBe(now - 86_400_000);
    expect(parseTimeOption('30m', '--until', now)).toBe(now - 1_800_000);
  });

  it('refuses anything else with INVALID_REQUEST naming the option and every form', () => {
    const err = thrown(() => parseTimeOption('yesterday', '--since', now));
    expect(err.code).toBe(ErrorCode.INVALID_REQUEST);
    expect(err.message).toContain('--since must be a time');
    expect(err.hint).toContain('--since 24h');
  });
});

/** `<schedule>` and `<on event>` in a directive's metadata: read, and checked where they stand. */
import { describe, expect, it } from 'vitest';
import { parseDirective } from '../../../src/directive/parse-directive.js';
import { thrown } from '../../support/thrown.js';

function directive(metadata: string, inputs = ''): string {
  return `# t\n\n\`\`\`xml\n<directive name="t" version="1.0.0">\n<metadata>\n${metadata}\n</metadata>\n<inputs>${inputs}</inputs>\n<process><step name="a"><render>x</render></step></process>\n</directive>\n\`\`\`\n`;
}

const diagnostics = (text: string) =>
  (thrown(() => parseDirective(text, 't.md')).details?.diagnostics ?? []) as {
    code: string;
    message: string;
    loc: { line: number };
  }[];

describe('<schedule> and <on event>', () => {
  it('reads schedules with their inputs, and the events a directive runs on', () => {
    const d = parseDirective(
      directive(
        `<schedule cron="0 3 * * *" timezone="Europe/Berlin"><input name="report">daily</input><input name="days">7</input></schedule>
         <schedule cron="*/5 * * * *" name="often"><input name="report">hourly</input></schedule>
         <on event="order.created"/><on event="order.paid"/>`,
        '<input name="report" type="string" required="true"/><input name="days" type="integer" default="1"/><input name="event" type="object"/>',
      ),
      't.md',
    );
    expect(d.schedules).toMatchObject([
      {
        name: '1',
        cron: '0 3 * * *',
        timezone: 'Europe/Berlin',
        inputs: { report: 'daily', days: '7' },
      },
      { name: 'often', cron: '*/5 * * * *', timezone: undefined, inputs: { report: 'hourly' } },
    ]);
    expect(d.events.map((e) => e.event)).toEqual(['order.created', 'order.paid']);
  });

  it('refuses a bad cron expression or time zone at its line', () => {
    const errors = diagnostics(
      directive('<schedule cron="61 3 * * *"/>\n<schedule cron="0 3 * * *" timezone="Mars/Base"/>'),
    );
    expect(errors.map((e) => [e.code, e.loc.line])).toEqual([
      ['INVALID_ATTRIBUTE', 6],
      ['INVALID_ATTRIBUTE', 7],
    ]);
    expect(errors[0]!.message).toContain('is not a cron expression');
    expect(errors[1]!.message).toContain('"Mars/Base" is not a time zone');
  });

  it("checks a schedule's inputs against the directive's: unknown, mistyped and missing ones", () => {
    const errors = diagnostics(
      directive(
        '<schedule cron="0 3 * * *"><input name="dayz">7</input><input name="days">seven</input></schedule>',
        '<input name="days" type="integer" default="1"/><input name="who" type="string" required="true"/>',
      ),
    );
    expect(errors.map((e) => e.message)).toEqual([
      expect.stringContaining(
        'input "dayz", which the directive does not declare. Did you mean "days"?',
      ),
      expect.stringContaining('input "days" the value "seven", which is not an integer'),
      expect.stringContaining('does not give required input "who"'),
    ]);
  });

  it('needs an object input "event" in a directive that runs on events, and a proper event name', () => {
    expect(diagnostics(directive('<on event="order.created"/>'))[0]!.message).toContain(
      'takes the event\'s payload as its input "event"',
    );
    expect(
      diagnostics(directive('<on event="no spaces"/>', '<input name="event" type="object"/>'))[0]!
        .message,
    ).toContain('is not an event name');
  });
});

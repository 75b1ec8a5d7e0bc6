import { describe, expect, it } from 'vitest';
import { parseDirective } from '../../../src/directive/parse-directive.js';

const file = (metadata: string) =>
  `# s\n\n\`\`\`xml\n<directive name="s" version="1.0.0">\n<metadata>${metadata}</metadata>\n<inputs><input name="customer" type="string" required="true"/></inputs>\n<process><step name="a"><render>x</render></step></process>\n</directive>\n\`\`\`\n`;

describe('run settings of <metadata>', () => {
  it('reads tags, a priority and a concurrency key, keeping templates as written', () => {
    const d = parseDirective(
      file(`<tag name="customer" value="\${inputs.customer}"/><tag name="kind" value="nightly"/>
        <priority value="8"/><concurrency key="{input:customer}" limit="2"/>`),
      's.md',
    );
    expect(d.runSettings.tags.map(({ name, value }) => ({ name, value }))).toEqual([
      { name: 'customer', value: '${inputs.customer}' },
      { name: 'kind', value: 'nightly' },
    ]);
    expect(d.runSettings.priority).toBe(8);
    expect(d.runSettings.concurrency).toMatchObject({ key: '{input:customer}', limit: 2 });
  });

  it('are none when the directive declares none', () => {
    const d = parseDirective(file(''), 's.md');
    expect(d.runSettings).toEqual({ tags: [], priority: undefined, concurrency: undefined });
    expect(d.metadata).toEqual({});
  });
});

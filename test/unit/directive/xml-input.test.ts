/**
 * XML is read as XML, and what would cost too much to read is refused at once: character
 * references decode, entity expansion and deep nesting fail fast with a located error.
 */
import { describe, expect, it } from 'vitest';
import type { ProcessNode } from '../../../src/directive/ast.js';
import { parseDirective } from '../../../src/directive/parse-directive.js';
import { ErrorCode } from '../../../src/errors/index.js';
import { thrown } from '../../support/thrown.js';

const FENCE = '```';

function file(process: string, name = 'case'): string {
  return `# Case\n\n${FENCE}xml\n<directive name="${name}" version="1.0.0">\n<process>\n${process}\n</process>\n</directive>\n${FENCE}\n`;
}

function firstStep(text: string): ProcessNode {
  return parseDirective(text, 'case.md').process[0]!;
}

describe('XML input', () => {
  it('decodes character references in text: &#65; is A, &#x1F600; an emoji, &#10; a line break', () => {
    const step = firstStep(
      file('<step name="s"><render>x&#65;&#x42;&#10;&#x1F600;&lt;&amp;&gt;</render></step>'),
    );
    expect(step.kind === 'step' && step.action.type === 'render' && step.action.template).toBe(
      'xAB\n😀<&>',
    );
  });

  it('decodes character references in attribute values: value="1&#10;2" is three characters', () => {
    const step = firstStep(
      file(
        '<step name="s"><execute item_type="tool" item_id="dirigent/util/echo"><param name="v" value="1&#10;2&quot;&apos;"/></execute></step>',
      ),
    );
    const param =
      step.kind === 'step' && step.action.type === 'execute' ? step.action.params[0] : undefined;
    expect(param?.value).toEqual({ kind: 'literal', value: '1\n2"\'' });
  });

  it("keeps an unknown named reference (HTML's &nbsp;) as written", () => {
    const step = firstStep(file('<step name="s"><render>a&nbsp;b</render></step>'));
    expect(step.kind === 'step' && step.action.type === 'render' && step.action.template).toBe(
      'a&nbsp;b',
    );
  });

  it('refuses 100,000 nested elements at once with XML_TOO_DEEP, not a stack overflow', () => {
    const deep = `<step name="s"><render>${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}</render></step>`;
    const started = performance.now();
    const err = thrown(() => parseDirective(file(deep), 'case.md'));
    expect(err.code).toBe(ErrorCode.XML_TOO_DEEP);
    expect(err.location).toMatchObject({ file: 'case.md', line: 6 });
    // Bounded: one linear scan, far from the seconds a quadratic or recursive reader would take.
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('refuses entity expansion ("billion laughs") before expanding anything', () => {
    const entities = Array.from({ length: 10 }, (_, i) =>
      i === 0 ? '<!ENTITY e0 "lol">' : `<!ENTITY e${i} "${`&e${i - 1};`.repeat(10)}">`,
    ).join('');
    const text = `# Case\n\n${FENCE}xml\n<!DOCTYPE d [${entities}]>\n<directive name="case" version="1.0.0"><process><step name="s"><render>&e9;</render></step></process></directive>\n${FENCE}\n`;
    const err = thrown(() => parseDirective(text, 'case.md'));
    expect(err.code).toBe(ErrorCode.XML_SYNTAX);
    expect(err.location).toEqual({ file: 'case.md', line: 4, column: 1 });
  });

  it('refuses a directive larger than its limit with DIRECTIVE_TOO_LARGE, naming the limit and the setting', () => {
    const text = file(`<step name="s"><render>${'x'.repeat(2000)}</render></step>`);
    const err = thrown(() => parseDirective(text, 'case.md', { maxBytes: 1000 }));
    expect(err.code).toBe(ErrorCode.DIRECTIVE_TOO_LARGE);
    expect(err.message).toContain('1000 bytes');
    expect(err.hint).toContain('directive_bytes');
    expect(parseDirective(text, 'case.md').name).toBe('case');
  });
});

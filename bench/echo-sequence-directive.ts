/** A directive of many sequential `dirigent/util/echo` steps. */
import type { GeneratedDirective } from './generated-directive.js';

/**
 * `steps` steps in document order, each echoing a literal and the previous step's index through
 * a template; no expressions, no `<next>`: the engine's own cost per step, plus a template.
 */
export function echoSequenceDirective(steps: number): GeneratedDirective {
  const body = Array.from(
    { length: steps },
    (_, i) => `    <step name="s${i}">
      <execute item_type="tool" item_id="dirigent/util/echo">
        <param name="i" value="${i}"/>
        <param name="run" value="\${inputs.label}"/>
      </execute>
    </step>`,
  ).join('\n');
  const text = `# Echo sequence

${steps} echo steps, one after the other.

\`\`\`xml
<directive name="echo-sequence" version="1.0.0">
  <metadata>
    <description>Engine benchmark: a long sequence.</description>
    <limits max_steps="${steps + 10}"/>
  </metadata>
  <inputs>
    <input name="label" type="string" default="bench">Echoed by every step</input>
  </inputs>
  <process>
${body}
  </process>
</directive>
\`\`\`
`;
  return { file: 'bench/echo-sequence.md', text, steps };
}

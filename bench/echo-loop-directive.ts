/** A directive that runs one `dirigent/util/echo` step many times through a `<next>` loop. */
import type { GeneratedDirective } from './generated-directive.js';

/**
 * `init` sets `state.i = 0`; `tick` echoes `${state.i}`, assigns `state.i + 1` (a JSONata
 * expression) and loops back to itself while `state.i < iterations`. A run takes
 * `iterations + 1` steps and stays within `max_steps`.
 */
export function echoLoopDirective(iterations: number): GeneratedDirective {
  const text = `# Echo loop

Runs the echo tool ${iterations} times through a loop with a counter in \`state\`.

\`\`\`xml
<directive name="echo-loop" version="1.0.0">
  <metadata>
    <description>Engine benchmark: one step, looped.</description>
    <limits max_steps="${iterations + 10}"/>
  </metadata>
  <process>
    <step name="init">
      <render>0</render>
      <assign name="i" expr="0"/>
    </step>
    <step name="tick">
      <execute item_type="tool" item_id="dirigent/util/echo">
        <param name="i" value="\${state.i}"/>
      </execute>
      <assign name="i" expr="state.i + 1"/>
      <next>
        <when path="state.i" op="lt" value="${iterations}" to="tick"/>
        <otherwise to="$end"/>
      </next>
    </step>
  </process>
  <outputs>
    <output name="i" value="\${state.i}">Iterations done</output>
  </outputs>
</directive>
\`\`\`
`;
  return { file: 'bench/echo-loop.md', text, steps: iterations + 1 };
}

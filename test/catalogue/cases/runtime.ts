/**
 * Bad inputs and failures at run time. Each directive is installed under `.ai/directives/` of a
 * temporary project and run by the real engine with the built-in tools.
 */
import { ErrorCode } from '../../../src/errors/index.js';
import { directive } from './markup.js';

/** A directive whose inputs the bad-input cases get wrong; its step writes `ran.txt`. */
export const INPUTS_DIRECTIVE = directive(
  `
  <inputs>
    <input name="count" type="integer" required="true">How many</input>
    <input name="verbose" type="boolean" default="false"/>
    <input name="tags" type="array"/>
  </inputs>
  <process>
    <step name="mark">
      <execute item_type="tool" item_id="dirigent/fs/write">
        <param name="path" value="ran.txt"/>
        <param name="content" value="\${inputs.count}"/>
      </execute>
    </step>
  </process>
`,
  'inputs_case',
);

export interface BadInputs {
  spec: string;
  inputs: Record<string, unknown>;
  /** Each must be (part of) one of the problems listed. */
  problems: string[];
}

export const BAD_INPUTS: BadInputs[] = [
  {
    spec: 'an integer input given "abc" is INVALID_INPUTS naming the input and the value',
    inputs: { count: 'abc' },
    problems: ['input "count" must be an integer, got "abc"'],
  },
  {
    spec: 'a missing required input is INVALID_INPUTS naming it',
    inputs: { verbose: 'true' },
    problems: ['missing required input "count"'],
  },
  {
    spec: 'an unknown input is INVALID_INPUTS naming it and the declared ones',
    inputs: { count: '3', colour: 'red' },
    problems: ['unknown input "colour" (declared: count, verbose, tags)'],
  },
  {
    spec: 'several input problems are reported together in one INVALID_INPUTS error',
    inputs: { verbose: 'maybe', tags: '{"not": "an array"}', colour: 'red' },
    problems: [
      'input "verbose" must be a boolean, got "maybe"',
      'input "tags" must be an array',
      'missing required input "count"',
      'unknown input "colour"',
    ],
  },
];

export interface RunFailure {
  spec: string;
  /** The directive's name (and file stem under .ai/directives/). */
  name: string;
  /** The directive; `‸` marks where the failed step's error is located, when it has a location. */
  text: string;
  inputs?: Record<string, unknown>;
  code: string;
  /** The step the run failed at. */
  step: string;
  says?: string[];
}

export const RUN_FAILURES: RunFailure[] = [
  {
    spec: 'a step executing a tool that <permissions> do not grant fails with PERMISSION_DENIED located at the <execute>',
    name: 'denied',
    text: directive(
      `
      <metadata>
        <permissions><execute><tool>dirigent.util.*</tool></execute></permissions>
      </metadata>
      <process>
        <step name="list">
          ‸<execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="ls"/></execute>
        </step>
      </process>
    `,
      'denied',
    ),
    code: ErrorCode.PERMISSION_DENIED,
    step: 'list',
    says: ['dirigent/shell/bash'],
  },
  {
    spec: 'a foreach over a non-array at run time fails with FOREACH_NOT_ARRAY located at the <foreach>',
    name: 'foreach_object',
    text: directive(
      `
      <inputs>
        <input name="items" type="object"/>
      </inputs>
      <process>
        <step name="each">
          ‸<foreach over="\${inputs.items}" as="item">
            <execute item_type="tool" item_id="dirigent/util/echo"/>
          </foreach>
        </step>
      </process>
    `,
      'foreach_object',
    ),
    inputs: { items: '{"a": 1}' },
    code: ErrorCode.FOREACH_NOT_ARRAY,
    step: 'each',
    says: ['needs an array', 'object {"a":1}'],
  },
  {
    spec: 'a tool chosen at run time that <permissions> do not grant fails with PERMISSION_DENIED at the <execute>',
    name: 'permission_runtime',
    text: directive(
      `
      <metadata>
        <permissions>
          <execute><tool>dirigent.util.*</tool></execute>
        </permissions>
      </metadata>
      <inputs>
        <input name="tool"/>
      </inputs>
      <process>
        <step name="run_it">
          ‸<execute item_type="tool" item_id="\${inputs.tool}">
            <param name="command" value="touch pwned.txt"/>
          </execute>
        </step>
      </process>
    `,
      'permission_runtime',
    ),
    inputs: { tool: 'dirigent/shell/bash' },
    code: ErrorCode.PERMISSION_DENIED,
    step: 'run_it',
    says: ['"dirigent/shell/bash"'],
  },
  {
    spec: 'an unknown tool fails the run with UNKNOWN_TOOL at its step, with a did-you-mean',
    name: 'unknown_tool',
    text: directive(
      `
      <process>
        ‸<step name="call">
          <execute item_type="tool" item_id="dirigent/util/ehco"/>
        </step>
      </process>
    `,
      'unknown_tool',
    ),
    code: ErrorCode.UNKNOWN_TOOL,
    step: 'call',
    says: ['"dirigent/util/ehco"', 'Did you mean "dirigent/util/echo"?'],
  },
  {
    spec: 'invalid tool params fail the run with INVALID_PARAMS at the step, naming the parameter',
    name: 'invalid_params',
    text: directive(
      `
      <process>
        ‸<step name="write">
          <execute item_type="tool" item_id="dirigent/fs/write">
            <param name="path" value="out.txt"/>
            <param name="contnet" value="hello"/>
          </execute>
        </step>
      </process>
    `,
      'invalid_params',
    ),
    code: ErrorCode.INVALID_PARAMS,
    step: 'write',
    says: ['/content is required', '/contnet is not allowed (did you mean "content"?)'],
  },
  {
    spec: 'a loop without an exit fails with MAX_STEPS_EXCEEDED at the looping step',
    name: 'endless_loop',
    text: directive(
      `
      <metadata>
        <limits max_steps="5"/>
      </metadata>
      <process>
        <step name="again">
          <render>once more</render>
          <next to="again"/>
        </step>
      </process>
    `,
      'endless_loop',
    ),
    code: ErrorCode.MAX_STEPS_EXCEEDED,
    step: 'again',
    says: ['more than 5 steps'],
  },
  {
    spec: 'a child directive that does not exist fails with UNKNOWN_DIRECTIVE at the calling step',
    name: 'missing_child',
    text: directive(
      `
      <process>
        ‸<step name="delegate">
          <execute item_type="directive" item_id="helpers/not_there"/>
        </step>
      </process>
    `,
      'missing_child',
    ),
    code: ErrorCode.UNKNOWN_DIRECTIVE,
    step: 'delegate',
    says: ['No directive "helpers/not_there" in any space'],
  },
  {
    spec: 'a child directive id that climbs out with .. is refused with INVALID_ITEM_ID',
    name: 'escaping_child',
    text: directive(
      `
      <process>
        ‸<step name="delegate">
          <execute item_type="directive" item_id="../../elsewhere"/>
        </step>
      </process>
    `,
      'escaping_child',
    ),
    code: ErrorCode.INVALID_ITEM_ID,
    step: 'delegate',
    says: ['"../../elsewhere"', '".."'],
  },
  {
    spec: 'a directive that calls itself stops at the depth limit: DEPTH_EXCEEDED, reported up as CHILD_FAILED',
    name: 'recurse',
    text: directive(
      `
      <metadata>
        <limits depth="2"/>
      </metadata>
      <process>
        ‸<step name="again">
          <execute item_type="directive" item_id="recurse"/>
        </step>
      </process>
    `,
      'recurse',
    ),
    code: ErrorCode.CHILD_FAILED,
    step: 'again',
    says: ['would nest 3 levels deep; the limit is 2', '[DEPTH_EXCEEDED]'],
  },
  {
    spec: 'dirigent/fs/write outside the project fails with PATH_OUTSIDE_PROJECT at the step',
    name: 'write_outside',
    text: directive(
      `
      <process>
        ‸<step name="escape">
          <execute item_type="tool" item_id="dirigent/fs/write">
            <param name="path" value="../outside.txt"/>
            <param name="content" value="x"/>
          </execute>
        </step>
      </process>
    `,
      'write_outside',
    ),
    code: ErrorCode.PATH_OUTSIDE_PROJECT,
    step: 'escape',
    says: ['"../outside.txt" is outside the project'],
  },
  {
    spec: 'state read before any step assigned it fails with TEMPLATE_PATH_MISSING at its step',
    name: 'missing_value',
    text: directive(
      `
      <process>
        ‸<step name="greet">
          <execute item_type="tool" item_id="dirigent/util/echo">
            <param name="text" value="Hello \${state.who}"/>
          </execute>
        </step>
        <step name="name">
          <render>Ada</render>
          <assign name="who" value="\${result}"/>
        </step>
      </process>
    `,
      'missing_value',
    ),
    code: ErrorCode.TEMPLATE_PATH_MISSING,
    step: 'greet',
    says: ['${state.who}'],
  },
];

/**
 * A directive whose second step reads an input that is not marked required and has no default:
 * its first step writes `ran.txt`, so a run that started would leave it behind.
 */
export const USED_INPUT_DIRECTIVE = directive(
  `
  <inputs>
    <input name="customer" type="string">Who the report is for</input>
    <input name="note" type="string">Read only where it may be missing</input>
    <input name="region" type="string">Read only by a step that tests it first</input>
  </inputs>
  <process>
    <step name="mark">
      <execute item_type="tool" item_id="dirigent/fs/write">
        <param name="path" value="ran.txt"/>
        <param name="content" value="note: {input:note?}"/>
      </execute>
    </step>
    <step name="regional">
      <condition path="inputs.region" op="exists"/>
      <render>for {input:region}</render>
    </step>
    <step name="report">
      <execute item_type="tool" item_id="dirigent/util/echo">
        <param name="text" ‸value="Report for {input:customer}"/>
      </execute>
    </step>
  </process>
`,
  'used_input',
);

/**
 * What validation proves of a directive against its project, before anything runs: every tool and
 * child directive it executes resolves, and literal parameters fit the tool's schema or the
 * child's inputs. Each case's directive is installed under `.ai/directives/` of a temporary
 * project that also holds {@link PROJECT_ITEMS}; `‸` marks where each finding must point.
 */
import { ErrorCode } from '../../../src/errors/index.js';
import { directive, type Malformed } from './markup.js';

/** Items of the project the cases run in, by path under its `.ai/`. */
export const PROJECT_ITEMS: Record<string, string> = {
  'tools/text/upper.py': `__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python_function_runtime"
__tool_description__ = "Upper-cases a text"
CONFIG_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}, "times": {"type": "integer", "default": 1}}, "required": ["text"], "additionalProperties": False}
def execute(params, project_path):
    return {"upper": params["text"].upper() * params["times"]}
`,
  'directives/helpers/greet.md': directive(
    `
    <inputs>
      <input name="who" type="string" required="true"/>
      <input name="times" type="integer" default="1"/>
      <input name="tone" type="string"/>
    </inputs>
    <process>
      <step name="greet"><render>Hello {input:who}, {input:tone}</render></step>
    </process>
  `,
    'greet',
  ),
  'directives/helpers/broken.md': directive(
    `
    <process>
      <step name="s"><render>\${inputs.nope}</render></step>
    </process>
  `,
    'broken',
  ),
};

export const PROJECT_CHECKS: Malformed[] = [
  // --- tools
  {
    spec: 'an unknown built-in tool is UNKNOWN_TOOL at its <execute>, with the did-you-mean the run would give',
    text: directive(`
      <process>
        <step name="find">
          ‸<execute item_type="tool" item_id="dirigent/fs/globb">
            <param name="pattern" value="*.md"/>
          </execute>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TOOL,
    says: ['"dirigent/fs/globb"', 'Did you mean "dirigent/fs/glob"?'],
  },
  {
    spec: "a misspelt tool of the project's spaces is UNKNOWN_TOOL with a did-you-mean among them",
    text: directive(`
      <process>
        <step name="shout">
          ‸<execute item_type="tool" item_id="text/uper">
            <param name="text" value="hi"/>
          </execute>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TOOL,
    says: ['Did you mean "text/upper"?'],
  },
  {
    spec: 'a parameter the tool does not take is INVALID_PARAMS at the <param>, with a did-you-mean; the one it requires is missing at the <execute>',
    text: directive(`
      <process>
        <step name="write">
          ‸<execute item_type="tool" item_id="dirigent/fs/write">
            <param name="path" value="out.txt"/>
            ‸<param name="contnet" value="hello"/>
          </execute>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_PARAMS,
    more: [ErrorCode.INVALID_PARAMS],
    says: ['dirigent/fs/write needs the parameter "content"'],
  },
  {
    spec: "a literal of the wrong type is INVALID_PARAMS at the <param>, against a space's tool schema too",
    text: directive(`
      <process>
        <step name="shout">
          <execute item_type="tool" item_id="text/upper">
            <param name="text" value="hi"/>
            ‸<param name="times" value="twice"/>
          </execute>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_PARAMS,
    says: ['<param name="times"> of text/upper: "twice"', 'must be integer'],
  },
  {
    spec: 'a parameter given an input of a type the tool never takes is INVALID_PARAMS at its value',
    text: directive(`
      <inputs><input name="names" type="array" default="[]"/></inputs>
      <process>
        <step name="shout">
          <execute item_type="tool" item_id="text/upper">
            <param name="text" ‸value="\${inputs.names}"/>
          </execute>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_PARAMS,
    says: ['is given an array (${inputs.names}), and the parameter takes string'],
  },

  {
    spec: 'the tool a <compensate> runs must resolve too',
    text: directive(`
      <process>
        <step name="reserve">
          <execute item_type="tool" item_id="dirigent/util/echo"/>
          <compensate>
            ‸<execute item_type="tool" item_id="dirigent/util/ecoh"/>
          </compensate>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TOOL,
    says: ['Did you mean "dirigent/util/echo"?'],
  },

  // --- child directives
  {
    spec: 'a child directive that does not exist is UNKNOWN_DIRECTIVE at its <execute>, with a did-you-mean',
    text: directive(`
      <process>
        <step name="delegate">
          ‸<execute item_type="directive" item_id="helpers/greeet">
            <param name="who" value="Ada"/>
          </execute>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_DIRECTIVE,
    says: ['"helpers/greeet"', 'Did you mean "helpers/greet"?'],
  },
  {
    spec: "params a child directive does not take, of the wrong type, or missing are INVALID_INPUTS: a child's input it reads with no default is required too",
    text: directive(`
      <process>
        <step name="delegate">
          ‸‸<execute item_type="directive" item_id="helpers/greet">
            ‸<param name="whom" value="Ada"/>
            ‸<param name="times" value="often"/>
          </execute>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_INPUTS,
    more: [ErrorCode.INVALID_INPUTS, ErrorCode.INVALID_INPUTS, ErrorCode.INVALID_INPUTS],
    says: ['needs the input "who"', '(and 3 more)'],
  },
  {
    spec: 'a child directive that does not validate is reported at the <execute> that runs it',
    text: directive(`
      <process>
        <step name="delegate">
          ‸<execute item_type="directive" item_id="helpers/broken"/>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['Child directive "helpers/broken" does not validate', '${inputs.nope}'],
  },
];

/** Executions that are right, or that cannot be checked before the run: no finding. */
export const PROJECT_CHECKS_ALLOW: { spec: string; text: string }[] = [
  {
    spec: "built-in tools, a space's tool, RYE's name of a built-in and a child directive, given what they take",
    text: directive(`
      <inputs><input name="who" default="Ada"/></inputs>
      <process>
        <step name="write">
          <execute item_type="tool" item_id="dirigent/fs/write">
            <param name="path" value="out.txt"/>
            <param name="content" value="{input:who}"/>
          </execute>
        </step>
        <step name="shout">
          <execute item_type="tool" item_id="text/upper">
            <param name="text" value="hi"/>
            <param name="times" value="2"/>
          </execute>
        </step>
        <step name="read">
          <execute item_type="tool" item_id="rye/file-system/read">
            <param name="path" value="out.txt"/>
          </execute>
        </step>
        <step name="greet">
          <execute item_type="directive" item_id="helpers/greet">
            <param name="who" value="{input:who}"/>
            <param name="tone" value="warm"/>
          </execute>
        </step>
      </process>
    `),
  },
  {
    spec: 'a tool chosen by a value, and parameters given by templates, are known only when the step runs',
    text: directive(`
      <inputs>
        <input name="tool" default="dirigent/util/echo"/>
        <input name="content" type="string" default="hello"/>
      </inputs>
      <process>
        <step name="any">
          <execute item_type="tool" item_id="{input:tool}">
            <param name="whatever" value="x"/>
          </execute>
        </step>
        <step name="write">
          <execute item_type="tool" item_id="dirigent/fs/write">
            <param name="path" value="\${state.file?}"/>
            <param name="content" value="\${inputs.content}"/>
          </execute>
        </step>
      </process>
    `),
  },
];

/**
 * Templates and expressions that are malformed or read unknown data; executions <permissions> do not grant; several mistakes at once.
 */
import { ErrorCode } from '../../../src/errors/index.js';
import { directive, type Malformed } from './markup.js';

export const DATA_AND_PERMISSIONS: Malformed[] = [
  // --- templates and expressions
  {
    spec: 'a template naming an undeclared input is UNKNOWN_TEMPLATE_PATH at its element, with a did-you-mean',
    text: directive(`
      <inputs>
        <input name="name"/>
      </inputs>
      <process>
        <step name="greet">
          ‸<render>Hello \${inputs.nmae}</render>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['${inputs.nmae}', 'Did you mean "name"?'],
  },
  {
    spec: 'a RYE {input:…} template naming an undeclared input is UNKNOWN_TEMPLATE_PATH at the value attribute of the param',
    text: directive(`
      <inputs>
        <input name="name"/>
      </inputs>
      <process>
        <step name="greet">
          <execute item_type="tool" item_id="dirigent/util/echo">
            <param name="text" ‸value="Hello {input:nmae}"/>
          </execute>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['{input:nmae}', 'Did you mean "name"?'],
  },
  {
    spec: 'a template naming an unknown step is UNKNOWN_TEMPLATE_PATH at its element, with a did-you-mean',
    text: directive(`
      <process>
        <step name="fetch">
          <render>data</render>
        </step>
        <step name="show">
          ‸<render>\${steps.fecth.result}</render>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['${steps.fecth.result}', 'Did you mean "fetch"?'],
  },
  {
    spec: 'a template naming a state key nothing assigns is UNKNOWN_TEMPLATE_PATH, with a did-you-mean',
    text: directive(`
      <process>
        <step name="count">
          <render>3</render>
          <assign name="total" value="\${result}"/>
        </step>
        <step name="show">
          ‸<render>\${state.totla}</render>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['${state.totla}', 'Did you mean "total"?'],
  },
  {
    spec: 'a template with an unclosed ${ is INVALID_TEMPLATE at the attribute that holds it',
    text: directive(`
      <inputs>
        <input name="name"/>
      </inputs>
      <process>
        <step name="greet">
          <execute item_type="tool" item_id="dirigent/util/echo">
            <param name="text" ‸value="Hello \${inputs.name"/>
          </execute>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_TEMPLATE,
    says: ['${inputs.name', 'never closed with "}"'],
  },
  {
    spec: 'invalid JSONata in expr is INVALID_EXPRESSION at its expr attribute',
    text: directive(`
      <process>
        <step name="count">
          <render>3</render>
          <assign name="next" ‸expr="state.i +"/>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_EXPRESSION,
    says: ['state.i +'],
  },
  {
    spec: 'a <param type="json"> that is not JSON is INVALID_ATTRIBUTE at its value',
    text: directive(`
      <process>
        <step name="send">
          <execute item_type="tool" item_id="dirigent/util/echo">
            <param name="list" ‸value="[1, 2" type="json"/>
          </execute>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['valid JSON'],
  },

  // --- several mistakes at once
  {
    spec: 'several mistakes in one file are all reported, each at its own line, in details.diagnostics',
    text: directive(`
      <inputs>
        <input name="count" ‸type="int"/>
      </inputs>
      <process>
        <step name="greet">
          ‸<exeucte item_type="tool" item_id="dirigent/util/echo"/>
        </step>
        ‸<step name="greet" ‸on_error="nowhere">
          <render>hi</render>
          <retry ‸attempts="0"/>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    more: [
      ErrorCode.UNKNOWN_ELEMENT,
      ErrorCode.DUPLICATE_STEP,
      ErrorCode.UNKNOWN_STEP,
      ErrorCode.INVALID_ATTRIBUTE,
    ],
    says: ['type="int"', '(and 4 more)'],
  },
  {
    spec: '{env:X} of a variable the project does not allow is ENV_NOT_ALLOWED at the element, naming how to allow it',
    text: directive(`
      <process>
        <step name="leak">
          ‸<render>key: {env:AWS_SECRET_ACCESS_KEY}</render>
        </step>
      </process>
    `),
    code: ErrorCode.ENV_NOT_ALLOWED,
    says: ['AWS_SECRET_ACCESS_KEY', 'not readable'],
  },
  {
    spec: '${env.X} in a tool parameter is ENV_NOT_ALLOWED too, even with a default',
    text: directive(`
      <process>
        <step name="leak">
          <execute item_type="tool" item_id="dirigent/util/echo">
            <param name="message" ‸value="{env:REDIS_URL:none}"/>
          </execute>
        </step>
      </process>
    `),
    code: ErrorCode.ENV_NOT_ALLOWED,
    says: ['REDIS_URL'],
  },
  {
    spec: 'a <secret> without a variable name is INVALID_ATTRIBUTE at the <secret>',
    text: directive(`
      <metadata>
        <secrets>
          ‸<secret name="not a name"/>
        </secrets>
      </metadata>
      <process>
        <step name="s"><render>hi</render></step>
      </process>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['<secret>'],
  },
  {
    spec: 'an unclosed template in an item_id is INVALID_TEMPLATE at the <execute>',
    text: directive(`
      <process>
        <step name="s">
          ‸<execute item_type="tool" item_id="tools/{input:name"/>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_TEMPLATE,
    says: ['never closed'],
  },
];

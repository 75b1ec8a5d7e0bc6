/**
 * Malformed processes and steps: unknown elements and attributes, names, actions.
 */
import { ErrorCode } from '../../../src/errors/index.js';
import { directive, type Malformed } from './markup.js';

export const STEPS: Malformed[] = [
  // --- the process and its steps
  {
    spec: 'an unknown element in <process> is UNKNOWN_ELEMENT at that element, with a did-you-mean',
    text: directive(`
      <process>
        ‸<stpe name="greet">
          <render>hi</render>
        </stpe>
      </process>
    `),
    code: ErrorCode.UNKNOWN_ELEMENT,
    says: ['<stpe>', 'Did you mean "step"?'],
  },
  {
    spec: 'an unknown element inside a step (<exeucte>) is UNKNOWN_ELEMENT with a did-you-mean',
    text: directive(`
      <process>
        <step name="greet">
          ‸<exeucte item_type="tool" item_id="dirigent/util/echo"/>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_ELEMENT,
    says: ['<exeucte>', 'Did you mean "execute"?'],
  },
  {
    spec: 'an unknown attribute (itme_id) is one UNKNOWN_ATTRIBUTE at that attribute, with a did-you-mean',
    text: directive(`
      <process>
        <step name="greet">
          <execute item_type="tool" ‸itme_id="dirigent/util/echo"/>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_ATTRIBUTE,
    says: ['no attribute "itme_id"', 'Did you mean "item_id"?'],
  },
  {
    spec: 'a misspelt on_error on a step is UNKNOWN_ATTRIBUTE with a did-you-mean',
    text: directive(`
      <process>
        <step name="greet" ‸on_eror="recover">
          <render>hi</render>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_ATTRIBUTE,
    says: ['Did you mean "on_error"?'],
  },
  {
    spec: 'a step without a name is MISSING_ATTRIBUTE at the step',
    text: directive(`
      <process>
        ‸<step>
          <render>hi</render>
        </step>
      </process>
    `),
    code: ErrorCode.MISSING_ATTRIBUTE,
    says: ['<step> needs a "name"'],
  },
  {
    spec: 'a step name with a space is INVALID_NAME at the name attribute',
    text: directive(`
      <process>
        <step ‸name="say hello">
          <render>hi</render>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_NAME,
    says: ['"say hello"'],
  },
  {
    spec: 'two steps with the same name are DUPLICATE_STEP at the second, naming the first line',
    text: directive(`
      <process>
        <step name="greet">
          <render>hi</render>
        </step>
        ‸<step name="greet">
          <render>hello</render>
        </step>
      </process>
    `),
    code: ErrorCode.DUPLICATE_STEP,
    says: ['"greet"', 'first at line 6'],
  },
  {
    spec: 'a step with two actions is STEP_ACTION at the second action',
    text: directive(`
      <process>
        <step name="greet">
          <render>hi</render>
          ‸<execute item_type="tool" item_id="dirigent/util/echo"/>
        </step>
      </process>
    `),
    code: ErrorCode.STEP_ACTION,
    says: ['2 actions', '<render>, <execute>'],
  },
  // --- locks and rate limits
  {
    spec: 'a <lock> key naming an undeclared input is UNKNOWN_TEMPLATE_PATH at the lock',
    text: directive(`
      <inputs>
        <input name="repo"/>
      </inputs>
      <process>
        <step name="push">
          ‸<lock key="repo:\${inputs.rpo}" limit="1"/>
          <execute item_type="tool" item_id="dirigent/util/echo"/>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['${inputs.rpo}', 'Did you mean "repo"?'],
  },
  {
    spec: 'a <lock> lease under a second is INVALID_ATTRIBUTE at the attribute',
    text: directive(`
      <process>
        <step name="push">
          <lock key="k" limit="1" ‸lease_seconds="0.5"/>
          <execute item_type="tool" item_id="dirigent/util/echo"/>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['lease_seconds="0.5"', 'at least 1 second'],
  },
  {
    spec: 'a <rate_limit> without max is MISSING_ATTRIBUTE',
    text: directive(`
      <process>
        <step name="call">
          ‸<rate_limit key="api"/>
          <execute item_type="tool" item_id="dirigent/util/echo"/>
        </step>
      </process>
    `),
    code: ErrorCode.MISSING_ATTRIBUTE,
    says: ['max'],
  },
];

/**
 * Malformed `<compensate>`: what it holds (one `<execute>`, with `<retry>` and `<timeout>`), and
 * where it may stand (in a step whose action is an `<execute>` or a `<foreach>`).
 */
import { ErrorCode } from '../../../src/errors/index.js';
import { directive, type Malformed } from './markup.js';

const ECHO = '<execute item_type="tool" item_id="dirigent/util/echo"/>';

export const COMPENSATION: Malformed[] = [
  {
    spec: 'a <compensate> without an <execute> is STEP_ACTION at the <compensate>',
    text: directive(`
      <process>
        <step name="reserve">
          ${ECHO}
          ‸<compensate>
            <retry attempts="3"/>
          </compensate>
        </step>
      </process>
    `),
    code: ErrorCode.STEP_ACTION,
    says: ['<compensate> in step "reserve" holds no <execute>'],
  },
  {
    spec: 'a <compensate> with two <execute>s is STEP_ACTION at the second',
    text: directive(`
      <process>
        <step name="reserve">
          ${ECHO}
          <compensate>
            <execute item_type="tool" item_id="dirigent/util/echo"/>
            ‸<execute item_type="tool" item_id="dirigent/util/echo"/>
          </compensate>
        </step>
      </process>
    `),
    code: ErrorCode.STEP_ACTION,
    says: ['holds 2 <execute> elements; it must hold exactly one'],
  },
  {
    spec: 'another action inside <compensate> (a <render>) is STEP_ACTION at that action',
    text: directive(`
      <process>
        <step name="reserve">
          ${ECHO}
          <compensate>
            <execute item_type="tool" item_id="dirigent/util/echo"/>
            ‸<render>undone</render>
          </compensate>
        </step>
      </process>
    `),
    code: ErrorCode.STEP_ACTION,
    says: ['<compensate> in step "reserve" holds <render>'],
  },
  {
    spec: 'an unknown element inside <compensate> (<retyr>) is UNKNOWN_ELEMENT with a did-you-mean',
    text: directive(`
      <process>
        <step name="reserve">
          ${ECHO}
          <compensate>
            <execute item_type="tool" item_id="dirigent/util/echo"/>
            ‸<retyr attempts="3"/>
          </compensate>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_ELEMENT,
    says: ['<retyr>', 'Did you mean "retry"?'],
  },
  {
    spec: 'an attribute on <compensate> is UNKNOWN_ATTRIBUTE at that attribute',
    text: directive(`
      <process>
        <step name="reserve">
          ${ECHO}
          <compensate ‸on_error="later">
            <execute item_type="tool" item_id="dirigent/util/echo"/>
          </compensate>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_ATTRIBUTE,
    says: ['<compensate> has no attribute "on_error"'],
  },
  {
    spec: 'a <compensate> in a step whose action is a <render> is STEP_ACTION at the <compensate>: nothing to undo',
    text: directive(`
      <process>
        <step name="note">
          <render>hi</render>
          ‸<compensate>
            <execute item_type="tool" item_id="dirigent/util/echo"/>
          </compensate>
        </step>
      </process>
    `),
    code: ErrorCode.STEP_ACTION,
    says: ['Step "note" runs <render>, which leaves nothing to undo'],
  },
  {
    spec: 'a <compensate> in a step that waits for a signal is STEP_ACTION at the <compensate>',
    text: directive(`
      <process>
        <step name="approve">
          <wait signal="ok"/>
          ‸<compensate>
            <execute item_type="tool" item_id="dirigent/util/echo"/>
          </compensate>
        </step>
      </process>
    `),
    code: ErrorCode.STEP_ACTION,
    says: ['Step "approve" runs <wait>'],
  },
  {
    spec: 'a <compensate> in a step without an action is STEP_ACTION at the <compensate>',
    text: directive(`
      <process>
        <step name="empty">
          ‸<compensate>
            <execute item_type="tool" item_id="dirigent/util/echo"/>
          </compensate>
        </step>
      </process>
    `),
    code: ErrorCode.STEP_ACTION,
    says: ['Step "empty" holds no action'],
  },
  {
    spec: 'two <compensate>s in one step are STEP_ACTION at the second',
    text: directive(`
      <process>
        <step name="reserve">
          ${ECHO}
          <compensate>
            <execute item_type="tool" item_id="dirigent/util/echo"/>
          </compensate>
          ‸<compensate>
            <execute item_type="tool" item_id="dirigent/util/echo"/>
          </compensate>
        </step>
      </process>
    `),
    code: ErrorCode.STEP_ACTION,
    says: ['more than one <compensate>'],
  },
  {
    spec: 'a <compensate> inside a <foreach> is UNKNOWN_ELEMENT there: it belongs to the step',
    text: directive(`
      <process>
        <step name="each">
          <foreach expr="[1, 2]" as="x">
            <execute item_type="tool" item_id="dirigent/util/echo"/>
            ‸<compensate><execute item_type="tool" item_id="dirigent/util/echo"/></compensate>
          </foreach>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_ELEMENT,
    says: ['<foreach> holds one <execute>, not <compensate>'],
  },
  {
    spec: 'a <compensate> on a <parallel> block is UNKNOWN_ELEMENT: compensations belong to steps',
    text: directive(`
      <process>
        <parallel name="both">
          <branch name="a"><step name="one">${ECHO}</step></branch>
          ‸<compensate><execute item_type="tool" item_id="dirigent/util/echo"/></compensate>
        </parallel>
      </process>
    `),
    code: ErrorCode.UNKNOWN_ELEMENT,
    says: ['<parallel name="both"> holds <branch> elements, not <compensate>'],
  },
  {
    spec: "a bad <retry> inside <compensate> is INVALID_ATTRIBUTE at its attribute, as a step's is",
    text: directive(`
      <process>
        <step name="reserve">
          ${ECHO}
          <compensate>
            <execute item_type="tool" item_id="dirigent/util/echo"/>
            <retry ‸attempts="none"/>
          </compensate>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['attempts="none"'],
  },
  {
    spec: 'an <execute> inside <compensate> without an item_id is MISSING_ATTRIBUTE at that <execute>',
    text: directive(`
      <process>
        <step name="reserve">
          ${ECHO}
          <compensate>
            ‸<execute item_type="tool"/>
          </compensate>
        </step>
      </process>
    `),
    code: ErrorCode.MISSING_ATTRIBUTE,
    says: ['<execute> needs an "item_id"'],
  },
];

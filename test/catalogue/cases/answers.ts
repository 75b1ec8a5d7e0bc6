/**
 * Malformed `<answer>` declarations: what an `<instruction>` or `<wait>` is answered with.
 */
import { ErrorCode } from '../../../src/errors/index.js';
import { directive, type Malformed } from './markup.js';

export const ANSWERS: Malformed[] = [
  {
    spec: 'an <answer> of an unknown type is INVALID_ATTRIBUTE at its type, naming the type meant',
    text: directive(`
      <process>
        <step name="review">
          <instruction>
            Review it.
            <answer name="approved" ‸type="bool"/>
          </instruction>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['type="bool"', 'Did you mean "boolean"?'],
  },
  {
    spec: 'an answer name given twice is DUPLICATE_ANSWER at the second name, naming the first line',
    text: directive(`
      <process>
        <step name="review">
          <instruction>
            Review it.
            <answer name="approved" type="boolean"/>
            <answer ‸name="approved" type="string"/>
          </instruction>
        </step>
      </process>
    `),
    code: ErrorCode.DUPLICATE_ANSWER,
    says: ['Answer "approved"', 'declared twice (first at line 9)'],
  },
  {
    spec: 'two unnamed <answer>s of a <wait> are DUPLICATE_ANSWER at the second',
    text: directive(`
      <process>
        <step name="window">
          <wait signal="minutes">
            <answer type="integer"/>
            ‸<answer type="number"/>
          </wait>
        </step>
      </process>
    `),
    code: ErrorCode.DUPLICATE_ANSWER,
    says: ['second <answer> without a name (the first at line 8)'],
  },
  {
    spec: 'an unnamed <answer> after named ones is INVALID_ANSWER at it, naming the first named one',
    text: directive(`
      <process>
        <step name="review">
          <instruction>
            Review it.
            <answer name="approved" type="boolean"/>
            ‸<answer type="string"/>
          </instruction>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ANSWER,
    says: ['also has named answers (the first, "approved", at line 9)'],
  },
  {
    spec: 'a named <answer> after an unnamed one is INVALID_ANSWER at it',
    text: directive(`
      <process>
        <step name="window">
          <wait>
            <answer type="integer"/>
            ‸<answer name="note" type="string"/>
          </wait>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ANSWER,
    says: ['<answer name="note"> is a field of an object', '(line 8)'],
  },
  {
    spec: 'an <answer> in a <render> is INVALID_ANSWER at it: a render waits for no answer',
    text: directive(`
      <process>
        <step name="say">
          <render>
            Hello.
            ‸<answer name="ok" type="boolean"/>
          </render>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ANSWER,
    says: ['<render> waits for no answer'],
  },
  {
    spec: 'an <answer> in an <execute> is INVALID_ANSWER at it',
    text: directive(`
      <process>
        <step name="call">
          <execute item_type="tool" item_id="dirigent/util/echo">
            <param name="text" value="hi"/>
            ‸<answer name="ok" type="boolean"/>
          </execute>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ANSWER,
    says: ['<execute> waits for no answer', '<instruction> or a <wait>'],
  },
  {
    spec: 'an <answer> beside the <instruction> of a step, not inside it, is UNKNOWN_ELEMENT at it',
    text: directive(`
      <process>
        <step name="review">
          <instruction>Review it.</instruction>
          ‸<answer name="approved" type="boolean"/>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_ELEMENT,
    says: ['<answer>'],
  },
  {
    spec: 'an unnamed <answer> without a type is MISSING_ATTRIBUTE at it',
    text: directive(`
      <process>
        <step name="window">
          <wait signal="go">‸<answer>Anything</answer></wait>
        </step>
      </process>
    `),
    code: ErrorCode.MISSING_ATTRIBUTE,
    says: ['needs a "type" attribute'],
  },
  {
    spec: 'required on an unnamed <answer> is INVALID_ATTRIBUTE at it: the whole answer is always required',
    text: directive(`
      <process>
        <step name="window">
          <wait signal="go"><answer type="boolean" ‸required="true"/></wait>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['"required" is for named answers'],
  },
  {
    spec: 'an answer name that is no template path is INVALID_NAME at the name',
    text: directive(`
      <process>
        <step name="review">
          <instruction>Review it.<answer ‸name="sign-off" type="boolean"/></instruction>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_NAME,
    says: ['"sign-off" is not a valid answer name', '${result.sign-off}'],
  },
  {
    spec: 'a misspelt attribute of <answer> is UNKNOWN_ATTRIBUTE with a did-you-mean',
    text: directive(`
      <process>
        <step name="review">
          <instruction>Review it.<answer name="approved" type="boolean" ‸requred="true"/></instruction>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_ATTRIBUTE,
    says: ['Did you mean "required"?'],
  },
  {
    spec: 'required="yes" on an <answer> is INVALID_ATTRIBUTE at it',
    text: directive(`
      <process>
        <step name="review">
          <instruction>Review it.<answer name="approved" type="boolean" ‸required="yes"/></instruction>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['required="yes"'],
  },
  {
    spec: 'a misspelt <answer> in an <instruction> is UNKNOWN_ELEMENT with a did-you-mean',
    text: directive(`
      <process>
        <step name="review">
          <instruction>Review it.‸<anwser name="approved" type="boolean"/></instruction>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_ELEMENT,
    says: ['<anwser>', 'Did you mean "answer"?'],
  },
  {
    spec: 'an element other than <answer> in a <wait> is UNKNOWN_ELEMENT at it',
    text: directive(`
      <process>
        <step name="window">
          <wait signal="go">‸<param name="x" value="1"/></wait>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_ELEMENT,
    says: ['<wait> holds <answer> elements, not <param>'],
  },
  {
    spec: 'several <answer> mistakes in one declaration are reported together, each at its place',
    text: directive(`
      <process>
        <step name="review">
          <instruction>
            Review it.
            <answer name="approved" ‸type="yesno"/>
            <answer ‸name="approved" type="string"/>
            ‸<answer type="string"/>
          </instruction>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    more: [ErrorCode.DUPLICATE_ANSWER, ErrorCode.INVALID_ANSWER],
  },
];

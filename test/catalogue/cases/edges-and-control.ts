/**
 * Malformed edges (<next>, <when>, on_error) and step controls (<condition>, <retry>, <timeout>, <foreach>, <parallel>).
 */
import { ErrorCode } from '../../../src/errors/index.js';
import { directive, type Malformed } from './markup.js';

export const EDGES_AND_CONTROL: Malformed[] = [
  {
    spec: 'an unknown step in <next> is UNKNOWN_STEP at the <next> line',
    text: directive(`
      <process>
        <step name="first">
          <render>hi</render>
          ‸<next to="thrid"/>
        </step>
        <step name="third">
          <render>bye</render>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_STEP,
    says: ['"thrid"', 'Did you mean "third"?'],
  },
  {
    spec: 'an unknown step in a <when to> is UNKNOWN_STEP at the <when> line',
    text: directive(`
      <inputs>
        <input name="mode"/>
      </inputs>
      <process>
        <step name="first">
          <render>hi</render>
          <next>
            ‸<when path="inputs.mode" op="eq" value="full" to="nowhere"/>
            <otherwise to="$end"/>
          </next>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_STEP,
    says: ['"nowhere"'],
  },
  {
    spec: 'a <next> leaving its parallel branch is NEXT_OUTSIDE_BRANCH at the <next> line',
    text: directive(`
      <process>
        <parallel name="both">
          <branch name="left">
            <step name="l1">
              <render>left</render>
              ‸<next to="after"/>
            </step>
          </branch>
          <branch name="right">
            <step name="r1">
              <render>right</render>
            </step>
          </branch>
        </parallel>
        <step name="after">
          <render>done</render>
        </step>
      </process>
    `),
    code: ErrorCode.NEXT_OUTSIDE_BRANCH,
    says: ['"after"'],
  },
  {
    spec: 'an unknown on_error target is UNKNOWN_STEP at the on_error attribute',
    text: directive(`
      <process>
        <step name="risky" ‸on_error="recvoer">
          <render>hi</render>
        </step>
        <step name="recover">
          <render>saved</render>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_STEP,
    says: ['on_error', '"recvoer"', 'Did you mean "recover"?'],
  },
  {
    spec: 'a <when> without "to" is one MISSING_ATTRIBUTE at the <when> line',
    text: directive(`
      <inputs>
        <input name="mode"/>
      </inputs>
      <process>
        <step name="first">
          <render>hi</render>
          <next>
            ‸<when path="inputs.mode" op="eq" value="full"/>
            <otherwise to="$end"/>
          </next>
        </step>
      </process>
    `),
    code: ErrorCode.MISSING_ATTRIBUTE,
    says: ['<when> needs a "to"'],
  },
  {
    spec: 'a bad condition operator is INVALID_CONDITION at the op attribute, with a did-you-mean',
    text: directive(`
      <inputs>
        <input name="count" type="integer"/>
      </inputs>
      <process>
        <step name="check">
          <condition path="inputs.count" ‸op="gtee" value="3"/>
          <render>many</render>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_CONDITION,
    says: ['op="gtee"', 'Did you mean "gte"?'],
  },
  {
    spec: 'a condition without a value is MISSING_ATTRIBUTE at the condition',
    text: directive(`
      <inputs>
        <input name="mode"/>
      </inputs>
      <process>
        <step name="check">
          ‸<condition path="inputs.mode" op="eq"/>
          <render>full</render>
        </step>
      </process>
    `),
    code: ErrorCode.MISSING_ATTRIBUTE,
    says: ['needs a "value"'],
  },
  {
    spec: '<retry attempts="0"> is INVALID_ATTRIBUTE at the attempts attribute',
    text: directive(`
      <process>
        <step name="flaky">
          <render>hi</render>
          <retry ‸attempts="0"/>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['attempts="0"', 'at least 1'],
  },
  {
    spec: '<retry backoff="linear"> is INVALID_ATTRIBUTE naming fixed and exponential',
    text: directive(`
      <process>
        <step name="flaky">
          <render>hi</render>
          <retry attempts="3" ‸backoff="linear"/>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['backoff="linear"', 'fixed, exponential'],
  },
  {
    spec: '<timeout seconds="30s"> is INVALID_ATTRIBUTE at the seconds attribute',
    text: directive(`
      <process>
        <step name="slow">
          <render>hi</render>
          <timeout ‸seconds="30s"/>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['seconds="30s"', 'number'],
  },
  {
    spec: 'a <foreach> without <execute> is STEP_ACTION at the <foreach> line',
    text: directive(`
      <inputs>
        <input name="files" type="array"/>
      </inputs>
      <process>
        <step name="each">
          ‸<foreach over="\${inputs.files}" as="file">
          </foreach>
        </step>
      </process>
    `),
    code: ErrorCode.STEP_ACTION,
    says: ['holds no <execute>'],
  },
  {
    spec: '<foreach over="notanarray"> is FOREACH_NOT_ARRAY at the <foreach> line',
    text: directive(`
      <process>
        <step name="each">
          ‸<foreach over="notanarray" as="item">
            <execute item_type="tool" item_id="dirigent/util/echo"/>
          </foreach>
        </step>
      </process>
    `),
    code: ErrorCode.FOREACH_NOT_ARRAY,
    says: ['"notanarray"', 'not an array'],
  },
  {
    spec: 'a <parallel> without branches is EMPTY_PROCESS at the <parallel> line',
    text: directive(`
      <process>
        ‸<parallel name="both">
        </parallel>
      </process>
    `),
    code: ErrorCode.EMPTY_PROCESS,
    says: ['no <branch>'],
  },
];

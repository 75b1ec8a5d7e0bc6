/**
 * What validation proves of a directive's own text before anything runs: every path a JSONata
 * expression reads (in `<condition expr>`, `<when expr>`, `<assign expr>`, `<output expr>`,
 * `<foreach expr>` and `<param expr>`), every `$function` and `$variable` it names, the fields of a
 * step's record, of an error and of a declared answer, and the templates of an `<instruction>`.
 * Each mistake is reported at the attribute (or element) that holds it, with a did-you-mean.
 */
import { ErrorCode } from '../../../src/errors/index.js';
import { directive, type Malformed } from './markup.js';

/** Inputs most cases read. */
const INPUTS = `
  <inputs>
    <input name="threshold" type="integer" default="3"/>
    <input name="files" type="array" default="[]"/>
  </inputs>`;

export const STATIC_CHECKS: Malformed[] = [
  // --- paths inside expressions
  {
    spec: 'a misspelt input inside a condition expr is UNKNOWN_TEMPLATE_PATH at the expr attribute, with a did-you-mean',
    text: directive(`
      ${INPUTS}
      <process>
        <step name="check">
          <condition ‸expr="inputs.treshold > 3"/>
          <render>big</render>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['inputs.treshold', 'expr "inputs.treshold > 3"', 'Did you mean "threshold"?'],
  },
  {
    spec: 'a <when expr> naming a step that does not exist is UNKNOWN_TEMPLATE_PATH at its expr',
    text: directive(`
      <process>
        <step name="fetch">
          <render>data</render>
          <next>
            <when ‸expr="steps.fecth.status = 'completed'" to="done"/>
            <otherwise to="$end"/>
          </next>
        </step>
        <step name="done"><render>ok</render></step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['steps.fecth', 'Did you mean "fetch"?'],
  },
  {
    spec: 'an <assign expr> reading state that nothing assigns is UNKNOWN_TEMPLATE_PATH, with a did-you-mean',
    text: directive(`
      <process>
        <step name="count">
          <render>3</render>
          <assign name="total" value="\${result}"/>
          <assign name="next" ‸expr="state.totla + 1"/>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['state.totla', 'Did you mean "total"?'],
  },
  {
    spec: 'an <output expr> is checked like every other expression',
    text: directive(`
      <process>
        <step name="list">
          <render>a</render>
          <assign name="files" value="\${result}"/>
        </step>
      </process>
      <outputs>
        <output name="count" ‸expr="$count(state.fiels)"/>
      </outputs>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['state.fiels', 'Did you mean "files"?'],
  },
  {
    spec: 'a <foreach expr> naming an undeclared input is UNKNOWN_TEMPLATE_PATH at the <foreach>',
    text: directive(`
      ${INPUTS}
      <process>
        <step name="each">
          ‸<foreach expr="inputs.fils" as="file">
            <execute item_type="tool" item_id="dirigent/util/echo"/>
          </foreach>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['inputs.fils', 'Did you mean "files"?'],
  },
  {
    spec: "a <param expr> inside a foreach reads the foreach's variables; a misspelt one is an unknown root, with a did-you-mean",
    text: directive(`
      ${INPUTS}
      <process>
        <step name="each">
          <foreach over="\${inputs.files}" as="file">
            <execute item_type="tool" item_id="dirigent/util/echo">
              <param name="text" ‸expr="fiel.name"/>
            </execute>
          </foreach>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['"fiel" is not something an expression can read', 'Did you mean "file"?'],
  },
  {
    spec: 'an expression reading the environment is UNKNOWN_TEMPLATE_PATH: only templates read it',
    text: directive(`
      <process>
        <step name="s">
          <render>x</render>
          <assign name="home" ‸expr="env.HOME"/>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['an expression does not read "env"'],
  },

  // --- $functions and $variables
  {
    spec: 'a misspelt $function is UNKNOWN_FUNCTION at the expr, with a did-you-mean',
    text: directive(`
      <process>
        <step name="s">
          <render>x</render>
          <assign name="sizes" expr="[1, 2]"/>
          <assign name="total" ‸expr="$sumx(state.sizes)"/>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_FUNCTION,
    says: ['$sumx', 'Did you mean "$sum"?'],
  },
  {
    spec: 'a $variable nothing binds is UNKNOWN_VARIABLE, with the foreach variable meant',
    text: directive(`
      ${INPUTS}
      <process>
        <step name="each">
          <foreach over="\${inputs.files}" as="file">
            <execute item_type="tool" item_id="dirigent/util/echo">
              <param name="text" ‸expr="$fiel.name"/>
            </execute>
          </foreach>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_VARIABLE,
    says: ['$fiel', 'Did you mean "$file"?'],
  },

  // --- what records, errors, inputs and answers hold
  {
    spec: "a field a step's record does not have is UNKNOWN_TEMPLATE_PATH, with a did-you-mean",
    text: directive(`
      <process>
        <step name="fetch"><render>data</render></step>
        <step name="show">
          ‸<render>\${steps.fetch.reslt}</render>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['${steps.fetch.reslt}', 'Did you mean "result"?'],
  },
  {
    spec: 'a field an error does not have is UNKNOWN_TEMPLATE_PATH, with a did-you-mean',
    text: directive(`
      <process>
        <step name="risky" on_error="report">
          <execute item_type="tool" item_id="dirigent/util/echo"/>
        </step>
        <step name="report">
          ‸<render>failed: \${error.mesage}</render>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['${error.mesage}', 'Did you mean "message"?'],
  },
  {
    spec: 'a field of an input whose type has none is UNKNOWN_TEMPLATE_PATH',
    text: directive(`
      ${INPUTS}
      <process>
        <step name="s">
          <condition ‸expr="inputs.threshold.value > 3"/>
          <render>x</render>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['input "threshold" is an integer: it has no field "value"'],
  },
  {
    spec: "a field a step's declared answer does not have is UNKNOWN_TEMPLATE_PATH, read by a later step or by the step itself",
    text: directive(`
      <process>
        <step name="review">
          <instruction>
            Review the draft.
            <answer name="approved" type="boolean"/>
            <answer name="comment" type="string"/>
          </instruction>
          <assign name="ok" ‸expr="result.aproved"/>
        </step>
        <step name="ship">
          ‸<render>\${steps.review.result.coment}</render>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    more: [ErrorCode.UNKNOWN_TEMPLATE_PATH],
    says: ['the answer of this step has no field "aproved"', 'Did you mean "approved"?'],
  },
  {
    spec: 'a field of an answer that is one value (a single unnamed <answer>) is UNKNOWN_TEMPLATE_PATH',
    text: directive(`
      <process>
        <step name="approve">
          <wait signal="approve"><answer type="boolean"/></wait>
        </step>
        <step name="ship">
          <condition ‸expr="steps.approve.result.yes"/>
          <render>shipping</render>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['the answer of step "approve" is a boolean: it has no field "yes"'],
  },

  // --- compensations
  {
    spec: "a compensation's parameters are checked: it sees the result of the step it undoes, the inputs and state, no foreach variable of another step",
    text: directive(`
      <inputs><input name="order" default="o-1"/></inputs>
      <process>
        <step name="reserve">
          <execute item_type="tool" item_id="dirigent/util/echo">
            <param name="order" value="{input:order}"/>
          </execute>
          <compensate>
            <execute item_type="tool" item_id="dirigent/util/echo">
              <param name="release" value="\${result.order} {input:order}"/>
              <param name="why" ‸value="\${inputs.ordr}"/>
            </execute>
          </compensate>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['${inputs.ordr}', 'Did you mean "order"?'],
  },

  // --- conditions and instructions
  {
    spec: 'a condition path naming an undeclared input is UNKNOWN_TEMPLATE_PATH at its path attribute',
    text: directive(`
      <inputs><input name="mode" default="full"/></inputs>
      <process>
        <step name="s">
          <condition ‸path="inputs.mdoe" op="eq" value="full"/>
          <render>x</render>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['inputs.mdoe', 'Did you mean "mode"?'],
  },
  {
    spec: 'an <instruction> naming an undeclared input cannot render: UNKNOWN_TEMPLATE_PATH at the <instruction>',
    text: directive(`
      <inputs><input name="document" default="notes.md"/></inputs>
      <process>
        <step name="review">
          ‸<instruction>Review {input:documnet} and answer ok.</instruction>
        </step>
      </process>
    `),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['{input:documnet}', 'Did you mean "document"?'],
  },
  {
    spec: 'an <instruction> with an unclosed template cannot render: INVALID_TEMPLATE at the <instruction>',
    text: directive(`
      <process>
        <step name="review">
          ‸<instruction>Review \${state.draft and answer ok.</instruction>
        </step>
      </process>
    `),
    code: ErrorCode.INVALID_TEMPLATE,
    says: ['never closed'],
  },
];

/** Directives that read their data in ways that cannot be followed, or rightly: all valid. */
export const STATIC_CHECKS_ALLOW: { spec: string; text: string }[] = [
  {
    spec: 'names inside filters, groups and lambdas are relative to what they filter, and variables the expression binds are its own',
    text: directive(`
      ${INPUTS}
      <process>
        <step name="s">
          <render>x</render>
          <assign name="items" expr="[{'price': 4, 'name': 'a'}]"/>
          <assign name="dear" expr="state.items[price > $$.inputs.threshold].name"/>
          <assign name="names" expr="$map(state.items, function($i) { $i.name & '!' })"/>
          <assign name="own" expr="($x := state.items[0]; $x.price * 2)"/>
          <assign name="parsed" expr="$parse('{&quot;a&quot;: 1}').a"/>
        </step>
      </process>
    `),
  },
  {
    spec: "a foreach's variables are names and $variables inside it; a step's result is anything when no answer is declared",
    text: directive(`
      ${INPUTS}
      <process>
        <step name="each">
          <foreach over="\${inputs.files}" as="file">
            <execute item_type="tool" item_id="dirigent/util/echo">
              <param name="a" expr="file.name & $string(file_index)"/>
              <param name="b" expr="$file.name"/>
              <param name="c" value="\${file.name} \${file_index}"/>
            </execute>
          </foreach>
          <assign name="first" expr="result[0].whatever"/>
        </step>
        <step name="later">
          <render>\${steps.each.result.0.anything} \${steps.each.status} \${steps.each.error.code?}</render>
        </step>
      </process>
    `),
  },
];

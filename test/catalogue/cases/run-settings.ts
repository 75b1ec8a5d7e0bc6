/**
 * Malformed run settings of <metadata>: <tag>, <priority>, <concurrency>.
 */
import { ErrorCode } from '../../../src/errors/index.js';
import { directive, type Malformed } from './markup.js';

const withInput = (metadata: string) =>
  directive(`
    <metadata>
    ${metadata}
    </metadata>
    <inputs><input name="customer" type="string"/></inputs>
    <process><step name="a"><render>x</render></step></process>
  `);

export const RUN_SETTINGS: Malformed[] = [
  {
    spec: 'a <tag> without a value is MISSING_ATTRIBUTE at the <tag>',
    text: withInput(`‸<tag name="customer"/>`),
    code: ErrorCode.MISSING_ATTRIBUTE,
    says: ['"value"'],
  },
  {
    spec: 'a <tag> whose name is not a word is INVALID_NAME at its name',
    text: withInput(`<tag ‸name="the customer" value="\${inputs.customer}"/>`),
    code: ErrorCode.INVALID_NAME,
    says: ['"the customer"'],
  },
  {
    spec: 'the same tag twice is DUPLICATE_SETTING at the second',
    text: withInput(`<tag name="customer" value="\${inputs.customer}"/>
    ‸<tag name="customer" value="x"/>`),
    code: ErrorCode.DUPLICATE_SETTING,
    says: ['tag "customer" twice'],
  },
  {
    spec: 'a tag that reads state is UNKNOWN_TEMPLATE_PATH at the <tag>: a setting is settled from the inputs',
    text: withInput(`‸<tag name="stage" value="\${state.stage}"/>`),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['from its inputs only'],
  },
  {
    spec: 'a tag that reads an input not declared is UNKNOWN_TEMPLATE_PATH with a did-you-mean',
    text: withInput(`‸<tag name="customer" value="\${inputs.custmer}"/>`),
    code: ErrorCode.UNKNOWN_TEMPLATE_PATH,
    says: ['no input named "custmer"', 'Did you mean "customer"'],
  },
  {
    spec: 'a priority of 11 is INVALID_ATTRIBUTE at its value, naming the range',
    text: withInput(`<priority ‸value="11"/>`),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['from 1 to 10'],
  },
  {
    spec: 'two <priority> elements are DUPLICATE_SETTING at the second',
    text: withInput(`<priority value="3"/>
    ‸<priority value="4"/>`),
    code: ErrorCode.DUPLICATE_SETTING,
    says: ['priority twice'],
  },
  {
    spec: 'a <concurrency> without a limit is MISSING_ATTRIBUTE at the element',
    text: withInput(`‸<concurrency key="\${inputs.customer}"/>`),
    code: ErrorCode.MISSING_ATTRIBUTE,
    says: ['"limit"'],
  },
  {
    spec: 'a concurrency limit of 0 is INVALID_ATTRIBUTE at the limit',
    text: withInput(`<concurrency key="\${inputs.customer}" ‸limit="0"/>`),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['limit'],
  },
  {
    spec: 'a misspelt <concurrency> attribute is UNKNOWN_ATTRIBUTE with a did-you-mean',
    text: withInput(`<concurrency key="\${inputs.customer}" limit="1" ‸limt="2"/>`),
    code: ErrorCode.UNKNOWN_ATTRIBUTE,
    says: ['Did you mean "limit"'],
  },
];

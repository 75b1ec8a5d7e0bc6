/**
 * Malformed <directive> elements, metadata and input declarations.
 */
import { ErrorCode } from '../../../src/errors/index.js';
import { directive, fenced, type Malformed } from './markup.js';

export const DIRECTIVE_AND_INPUTS: Malformed[] = [
  // --- the root element
  {
    spec: 'a root element other than <directive> is NOT_A_DIRECTIVE at that element',
    text: fenced(`
      ‸<workflow name="case" version="1.0.0"/>
    `),
    code: ErrorCode.NOT_A_DIRECTIVE,
    says: ['not <workflow>'],
  },
  {
    spec: 'an element after </directive> is NOT_A_DIRECTIVE at that element',
    text: fenced(`
      <directive name="case" version="1.0.0"/>
      ‸<process/>
    `),
    code: ErrorCode.NOT_A_DIRECTIVE,
    says: ['<process> after </directive>'],
  },
  {
    spec: 'a <directive> without name is MISSING_ATTRIBUTE at the <directive> line',
    text: fenced(`
      ‸<directive version="1.0.0"/>
    `),
    code: ErrorCode.MISSING_ATTRIBUTE,
    says: ['"name"'],
  },
  {
    spec: 'a <directive> without version is MISSING_ATTRIBUTE at the <directive> line',
    text: fenced(`
      ‸<directive name="case"/>
    `),
    code: ErrorCode.MISSING_ATTRIBUTE,
    says: ['"version"'],
  },
  {
    spec: 'version="1.0" is INVALID_VERSION at the version attribute, suggesting 1.0.0',
    text: fenced(`
      <directive name="case" ‸version="1.0"/>
    `),
    code: ErrorCode.INVALID_VERSION,
    says: ['version="1.0" is not a semantic version'],
  },
  {
    spec: 'version="v1" is INVALID_VERSION at the version attribute',
    text: fenced(`
      <directive name="case" ‸version="v1"/>
    `),
    code: ErrorCode.INVALID_VERSION,
    says: ['version="v1"'],
  },
  {
    spec: 'a misspelt version attribute is one UNKNOWN_ATTRIBUTE with a did-you-mean (not also a missing version)',
    text: fenced(`
      <directive name="case" ‸verison="1.0.0"/>
    `),
    code: ErrorCode.UNKNOWN_ATTRIBUTE,
    says: ['no attribute "verison"', 'Did you mean "version"?'],
  },
  {
    spec: 'an unknown element in <directive> is UNKNOWN_ELEMENT at that element, with a did-you-mean',
    text: directive(`
      ‸<proces>
      </proces>
    `),
    code: ErrorCode.UNKNOWN_ELEMENT,
    says: ['<proces>', 'Did you mean "process"?'],
  },
  {
    spec: 'a misspelt <limits> in <metadata> is UNKNOWN_ELEMENT with a did-you-mean',
    text: directive(`
      <metadata>
        ‸<limts max_steps="10"/>
      </metadata>
    `),
    code: ErrorCode.UNKNOWN_ELEMENT,
    says: ['<limts>', 'Did you mean "limits"?'],
  },
  {
    spec: 'a limit that is not a whole number is INVALID_ATTRIBUTE at that attribute',
    text: directive(`
      <metadata>
        <limits ‸max_steps="lots"/>
      </metadata>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['max_steps="lots"', 'integer'],
  },

  // --- inputs
  {
    spec: 'input type="int" is INVALID_ATTRIBUTE at the type attribute, suggesting "integer"',
    text: directive(`
      <inputs>
        <input name="count" ‸type="int"/>
      </inputs>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['type="int"', 'Did you mean "integer"?'],
  },
  {
    spec: 'an unknown input type is INVALID_ATTRIBUTE listing the types there are',
    text: directive(`
      <inputs>
        <input name="when" ‸type="datetime"/>
      </inputs>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['type="datetime"', 'string, integer, number, boolean, array, object'],
  },
  {
    spec: 'a default that is not an integer, for an integer input, is INVALID_ATTRIBUTE at the default',
    text: directive(`
      <inputs>
        <input name="count" type="integer" ‸default="abc"/>
      </inputs>
    `),
    code: ErrorCode.INVALID_ATTRIBUTE,
    says: ['<input name="count">', 'default="abc"', 'an integer'],
  },
  {
    spec: 'an input declared twice is DUPLICATE_INPUT at the second, naming the first line',
    text: directive(`
      <inputs>
        <input name="who"/>
        <input ‸name="who"/>
      </inputs>
    `),
    code: ErrorCode.DUPLICATE_INPUT,
    says: ['"who"', 'first at line 6'],
  },
  {
    spec: 'an unknown element in <inputs> is UNKNOWN_ELEMENT with a did-you-mean',
    text: directive(`
      <inputs>
        ‸<inptu name="who"/>
      </inputs>
    `),
    code: ErrorCode.UNKNOWN_ELEMENT,
    says: ['Did you mean "input"?'],
  },
];

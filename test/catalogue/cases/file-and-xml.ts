/**
 * Malformed files: the Markdown around the XML, and XML that is not well-formed.
 */
import { ErrorCode } from '../../../src/errors/index.js';
import { directive, fenced, md, type Malformed } from './markup.js';

export const FILE_AND_XML: Malformed[] = [
  // --- the Markdown around the XML
  {
    spec: 'a file without a ```xml fence is NO_XML_FENCE at the bare <directive> line',
    text: md(`
      # Case

      ‸<directive name="case" version="1.0.0"/>
    `),
    code: ErrorCode.NO_XML_FENCE,
    says: ['```xml', 'line 3'],
  },
  {
    spec: 'a fence opened as ```XML (not ```xml) is NO_XML_FENCE at that fence line',
    text: md(`
      # Case

      ‸'''XML
      <directive name="case" version="1.0.0"/>
      '''
    `),
    code: ErrorCode.NO_XML_FENCE,
    says: ['```XML', 'exactly ```xml'],
  },
  {
    spec: 'a file with no XML at all is NO_XML_FENCE at line 1',
    text: md(`
      ‸# Just prose

      Nothing to run here.
    `),
    code: ErrorCode.NO_XML_FENCE,
  },
  {
    spec: 'an indented ```xml fence is NO_XML_FENCE at that line, saying the fence must start the line',
    text: md(`
      # Case

      ‸  '''xml
      <directive name="case" version="1.0.0"/>
      '''
    `),
    code: ErrorCode.NO_XML_FENCE,
    says: ['line 3', 'exactly ```xml'],
  },
  {
    spec: 'a ```xml fence that is never closed is UNCLOSED_FENCE at the opening fence line',
    text: md(`
      # Case

      ‸'''xml
      <directive name="case" version="1.0.0"/>
    `),
    code: ErrorCode.UNCLOSED_FENCE,
    says: ['opened at line 3', 'never closed'],
  },
  {
    spec: 'an empty ```xml fence is NOT_A_DIRECTIVE at the fence content',
    text: md(`
      # Case

      '''xml
      ‸'''
    `),
    code: ErrorCode.NOT_A_DIRECTIVE,
    says: ['empty'],
  },

  // --- broken XML inside the fence
  {
    spec: 'an unclosed element is XML_SYNTAX where the mismatch shows, naming the line it was opened at',
    text: directive(`
      <process>
        <step name="greet">
          <render>hi</render>
      ‸</process>
    `),
    code: ErrorCode.XML_SYNTAX,
    says: ['</step> was expected', '<step> is opened at line 6, column 5'],
  },
  {
    spec: 'a <directive> that is never closed is XML_SYNTAX at the <directive> line',
    text: md(`
      # Case

      '''xml
      ‸<directive name="case" version="1.0.0">
        <process>
        </process>
      '''
    `),
    code: ErrorCode.XML_SYNTAX,
    says: ['<directive> is never closed'],
  },
  {
    spec: 'elements left open at the end of the fence are XML_SYNTAX at the innermost one, naming them all',
    text: md(`
      # Case

      '''xml
      <directive name="case" version="1.0.0">
        <process>
          ‸<step name="greet">
      '''
    `),
    code: ErrorCode.XML_SYNTAX,
    says: ['<directive>, <process>, <step> are never closed'],
  },
  {
    spec: 'text before <directive> inside the fence is XML_SYNTAX at that text, quoting it',
    text: fenced(`
      ‸Run this:
      <directive name="case" version="1.0.0"/>
    `),
    code: ErrorCode.XML_SYNTAX,
    says: ['"Run this:" stands outside any element'],
  },
  {
    spec: 'a misspelt closing tag is XML_SYNTAX at the closing tag',
    text: directive(`
      <process>
        <step name="greet">
          <render>hi‸</rendr>
        </step>
      </process>
    `),
    code: ErrorCode.XML_SYNTAX,
    says: ['found </rendr> where </render> was expected'],
  },
  {
    spec: 'an unquoted attribute value is XML_SYNTAX at the attribute',
    text: directive(`
      <inputs>
        <input ‸name=who type="string"/>
      </inputs>
    `),
    code: ErrorCode.XML_SYNTAX,
    says: ['attribute "name" has no quoted value'],
  },
  {
    spec: 'an attribute value missing its closing quote is XML_SYNTAX at that element',
    text: directive(`
      <inputs>
        <input‸ name="who type="string"/>
      </inputs>
    `),
    code: ErrorCode.XML_SYNTAX,
    says: ['<input> has no closing quote'],
  },
  {
    spec: 'an attribute given twice is XML_SYNTAX at the second one',
    text: directive(`
      <process>
        <step name="a" ‸name="b">
          <render>hi</render>
        </step>
      </process>
    `),
    code: ErrorCode.XML_SYNTAX,
    says: ['attribute "name" is given twice'],
  },
  {
    spec: 'a bare & inside the fence is XML_SYNTAX at the &',
    text: directive(`
      <process>
        <step name="greet">
          <render>R‸&D</render>
        </step>
      </process>
    `),
    code: ErrorCode.XML_SYNTAX,
    says: ['bare "&"'],
  },
  {
    spec: 'a bare < inside the fence is XML_SYNTAX at the <',
    text: directive(`
      <process>
        <step name="compare">
          <render>1 ‸< 2</render>
        </step>
      </process>
    `),
    code: ErrorCode.XML_SYNTAX,
    says: ['bare "<"'],
  },
  {
    spec: 'a document type declaration (the door to entity expansion) is XML_SYNTAX at <!DOCTYPE',
    text: fenced(`
      ‸<!DOCTYPE lol [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>
      <directive name="case" version="1.0.0">
        <process><step name="s"><render>&b;</render></step></process>
      </directive>
    `),
    code: ErrorCode.XML_SYNTAX,
    says: ['document type declaration'],
  },
  {
    spec: 'elements nested more than 64 levels deep are XML_TOO_DEEP at the 65th level',
    text: directive(`
      <process>
        <step name="deep">
          <render>${'<b>'.repeat(60)}‸<b>x${'</b>'.repeat(61)}</render>
        </step>
      </process>
    `),
    code: ErrorCode.XML_TOO_DEEP,
    says: ['64 levels'],
  },
  {
    spec: 'a character reference to a character XML does not allow is XML_SYNTAX at its element',
    text: directive(`
      <process>
        <step name="nul">
          ‸<render>a&#0;b</render>
        </step>
      </process>
    `),
    code: ErrorCode.XML_SYNTAX,
    says: ['&#0;', 'U+0000'],
  },
];

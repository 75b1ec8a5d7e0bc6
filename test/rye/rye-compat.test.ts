/**
 * RYE's files parse as they are. These fixtures are written for Dirigent but reproduce every
 * layout and quirk found in RYE's public directives (reference §1, §9): each must parse, with the
 * warnings listed, and run as far as it can.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDirective } from '../../src/directive/parse-directive.js';
import { DirectiveLoader } from '../../src/engine/directive-loader.js';
import { Engine } from '../../src/engine/engine.js';
import { BuiltinDispatcher } from '../../src/tools/builtin-dispatcher.js';

const fence = '```';
const project = mkdtempSync(join(tmpdir(), 'dirigent-rye-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

const MODERN = `<!-- rye:signed:2026-02-10T02:00:00Z:placeholder:unsigned:unsigned -->
# Write Note

Write a note, the way RYE's modern directives are laid out.

${fence}xml
<directive name="write_note" version="1.0.0">
  <metadata>
    <description>Writes a note.</description>
    <category>notes</category>
    <author>someone</author>
    <model tier="fast" id="some-model"/>
    <limits turns="3" tokens="2048" max_turns="4"/>
    <permissions>
      <execute><tool>dirigent.util.*</tool></execute>
      <fetch><knowledge>*</knowledge></fetch>
    </permissions>
    <hooks><hook event="error"><action>retry</action></hook></hooks>
  </metadata>
  <inputs>
    <input name="text" type="string" required="true">The note</input>
  </inputs>
  <outputs>
    <output name="path">Where it went</output>
    <success>Note written</success>
    <failure>Could not write</failure>
  </outputs>
</directive>
${fence}

<process>
  <step name="validate" condition="only when {input:text} is long">
    <description>Check the input</description>
    Make sure {input:text} is not empty & that a < b holds.
    \`rye_execute(item_id="rye/file-system/write", parameters={"path": "x"})\`
  </step>
  <step name="call_echo">
    Echo it:
    <execute item_type="tool" item_id="tool:dirigent/util/echo">
      <param name="text" value="{input:text}"/>
    </execute>
  </step>
  <step name="show">
    <render>Done: {input:text}</render>
    <instruction>Tell the user where the note is.</instruction>
  </step>
  <step name="example">
    <template>literal <b>markup & stuff</template>
    <tool_call>rye_sign(item_id="x")</tool_call>
    <rule>Never guess.</rule>
  </step>
</process>

<success_criteria>
  <criterion>The note exists</criterion>
</success_criteria>
`;

const LEGACY = `# Legacy

${fence}xml
<directive>
  <metadata>
    <name>legacy_note</name>
    <version>0.1.0</version>
    <description>Process inside the fence, permissions at the root</description>
  </metadata>
  <permissions><cap>rye.execute.tool.dirigent.util.echo</cap></permissions>
  <steps>
    <step name="echo_step">
      <tool>rye_execute</tool>
      <parameters><message>hi</message></parameters>
    </step>
  </steps>
  <outputs><child_thread_id>The thread</child_thread_id></outputs>
</directive>
${fence}
`;

const FRONT_MATTER = `<!-- ryeos:signed:2026-05-23T09:45:41Z:abc:def:ghi -->
---
description: "A front-matter directive"
version: "1.1.0"
permissions:
  execute:
    - "*"
inputs:
  - name: reason
    type: string
    required: true
---

# Summary

Summarise because \${inputs.reason}; the usage is \${json(inputs.usage ?? null)}.
`;

describe('RYE compatibility', () => {
  it('reads the modern layout: process after the fence, prose steps, documentary elements', () => {
    const d = parseDirective(MODERN, 'notes/write.md');
    expect(d.name).toBe('write_note');
    expect(d.signature).toMatch(/^<!-- rye:signed:/);
    expect(d.permissions).toEqual(['rye.execute.tool.dirigent.util.*', 'rye.fetch.knowledge.*']);
    expect(d.limits.other).toEqual({ turns: 3, tokens: 2048, max_turns: 4 });
    expect(d.metadata.model).toEqual({ tier: 'fast', id: 'some-model' });
    expect(d.successCriteria).toEqual(['The note exists']);
    expect(
      d.process.map((n) => (n.kind === 'step' ? `${n.name}:${n.action.type}` : n.name)),
    ).toEqual([
      'validate:instruction',
      'call_echo:execute',
      'show:instruction',
      'example:instruction',
    ]);
    const call = d.process[1]!;
    expect(call.kind === 'step' && call.action.type === 'execute' && call.action.itemId).toBe(
      'dirigent/util/echo',
    );
    expect(new Set(d.warnings.map((w) => w.code))).toEqual(
      new Set(['PROSE_CONDITION', 'LENIENT_XML', 'PROSE_STEP', 'NAME_MISMATCH']),
    );
  });

  it('keeps opaque sections and prose as the instruction text', () => {
    const d = parseDirective(MODERN, 'notes/write_note.md');
    const validate = d.process[0]!;
    expect(
      validate.kind === 'step' && validate.action.type === 'instruction' && validate.action.text,
    ).toContain('a < b holds');
    const example = d.process[3]!;
    expect(
      example.kind === 'step' && example.action.type === 'instruction' && example.action.text,
    ).toContain('literal <b>markup & stuff');
  });

  it('reads the legacy layout: name and version in metadata, <steps>, root permissions, named outputs', () => {
    const d = parseDirective(LEGACY, 'legacy_note.md');
    expect(d).toMatchObject({
      name: 'legacy_note',
      version: '0.1.0',
      permissions: ['rye.execute.tool.dirigent.util.echo'],
    });
    expect(d.outputs.map((o) => o.name)).toEqual(['child_thread_id']);
    expect(d.process.map((n) => n.name)).toEqual(['echo_step']);
    expect(new Set(d.warnings.map((w) => w.code))).toEqual(
      new Set(['METADATA_ATTRIBUTE', 'LEGACY_LAYOUT', 'OUTPUT_ELEMENT']),
    );
  });

  it('reads front-matter directives as one instruction step', () => {
    const d = parseDirective(FRONT_MATTER, 'summary.md');
    expect(d).toMatchObject({ name: 'summary', version: '1.1.0', permissions: ['rye.execute.*'] });
    expect(d.inputs.map((i) => [i.name, i.required])).toEqual([['reason', true]]);
    expect(d.process).toHaveLength(1);
  });

  it('runs a RYE directive: tool steps by Dirigent, the rest by whoever answers the instructions', async () => {
    const engine = new Engine({
      projectDir: project,
      dispatcher: new BuiltinDispatcher(),
      loader: new DirectiveLoader(project),
    });
    const loaded = engine.loader.fromText(join(project, 'write_note.md'), MODERN);
    const run = engine.start(loaded, { text: 'buy milk' });
    let record = await run.settled();
    expect(record.waiting).toEqual([
      expect.objectContaining({
        step: 'validate',
        text: expect.stringContaining('Make sure buy milk is not empty'),
      }),
    ]);
    record = await engine.signal(run.runId, 'validate', 'ok');
    expect(record.waiting?.[0]?.step).toBe('show');
    expect(record.steps.map((s) => `${s.name}:${s.status}`)).toEqual([
      'validate:completed',
      'call_echo:completed',
    ]);
    record = await engine.signal(run.runId, 'show', 'told');
    record = await engine.signal(run.runId, 'example', 'done');
    expect(record.status).toBe('completed');
    engine.release();
  });
});

/**
 * The directive the parse+compile benchmark reads: ten steps using most of what a real workflow
 * uses (metadata, permissions, limits, typed inputs, templates, expressions, conditions,
 * retries, timeouts, `on_error`, branching `<next>`, render, outputs), in RYE's Markdown layout.
 * A dry run ends after `choose_output` with the notes as its output.
 */

const text = `# Release notes

Collects the changes since the last tag, groups them, drafts release notes and writes them to
the project. Runs unattended; a failed draft falls back to a plain list.

\`\`\`xml
<directive name="release-notes" version="1.2.0">
  <metadata>
    <description>Drafts release notes from the git history since the last tag.</description>
    <category>release</category>
    <author>dirigent</author>
    <limits duration_seconds="300" max_steps="50" depth="2" spawns="4"/>
    <permissions>
      <execute>
        <tool>dirigent.shell.*</tool>
        <tool>dirigent.fs.*</tool>
        <tool>dirigent.util.*</tool>
      </execute>
    </permissions>
  </metadata>
  <inputs>
    <input name="since" type="string" required="false" default="">Tag to start from; empty for the last tag</input>
    <input name="out" type="string" required="false" default="RELEASE_NOTES.md">File to write</input>
    <input name="max_entries" type="integer" required="false" default="200">Most commits to read</input>
    <input name="dry_run" type="boolean" required="false" default="false">Print instead of writing</input>
  </inputs>
  <process>
    <step name="find_tag">
      <description>Find the tag to start from.</description>
      <condition path="inputs.since" op="eq" value=""/>
      <execute item_type="tool" item_id="dirigent/shell/bash">
        <param name="command" value="git describe --tags --abbrev=0"/>
        <param name="timeout" value="10"/>
      </execute>
      <assign name="since" expr="$trim(result.stdout)"/>
      <retry attempts="2" backoff="fixed" delay_ms="200"/>
      <timeout seconds="15"/>
    </step>
    <step name="read_log" on_error="fallback">
      <execute item_type="tool" item_id="dirigent/shell/bash">
        <param name="command" value="git log --format='%h %s' -n {input:max_entries} \${state.since?}..HEAD"/>
      </execute>
      <assign name="log" value="\${result.stdout}"/>
      <assign name="count" expr="$count($split($trim(result.stdout), '\\n'))"/>
      <timeout seconds="30"/>
    </step>
    <step name="check_empty">
      <execute item_type="tool" item_id="dirigent/util/echo">
        <param name="count" value="\${state.count}"/>
      </execute>
      <next>
        <when path="state.count" op="eq" value="0" to="nothing_to_do"/>
        <otherwise to="group"/>
      </next>
    </step>
    <step name="group">
      <execute item_type="tool" item_id="dirigent/util/echo">
        <param name="features" expr="$filter($split(state.log, '\\n'), function($l) { $contains($l, 'feat') })"/>
        <param name="fixes" expr="$filter($split(state.log, '\\n'), function($l) { $contains($l, 'fix') })"/>
      </execute>
      <assign name="features" value="\${result.features}"/>
      <assign name="fixes" value="\${result.fixes}"/>
    </step>
    <step name="read_template">
      <execute item_type="tool" item_id="dirigent/fs/read">
        <param name="path" value=".github/release-template.md"/>
      </execute>
      <assign name="template" value="\${result.content}"/>
      <retry attempts="3" backoff="exponential" delay_ms="100" max_delay_ms="1000"/>
    </step>
    <step name="draft">
      <render>## Changes since \${state.since}

\${state.template}

Features: \${state.features}
Fixes: \${state.fixes}</render>
      <assign name="notes" value="\${result}"/>
    </step>
    <step name="choose_output">
      <execute item_type="tool" item_id="dirigent/util/echo">
        <param name="dry_run" value="\${inputs.dry_run}"/>
        <param name="out" value="{input:out}"/>
      </execute>
      <next>
        <when to="$end">
          <any>
            <condition path="inputs.dry_run" op="eq" value="true"/>
            <condition path="inputs.out" op="eq" value=""/>
          </any>
        </when>
        <otherwise to="write"/>
      </next>
    </step>
    <step name="write">
      <execute item_type="tool" item_id="dirigent/fs/write">
        <param name="path" value="{input:out}"/>
        <param name="content" value="\${state.notes}"/>
      </execute>
      <retry attempts="2" backoff="fixed" delay_ms="500"/>
      <next to="$end"/>
    </step>
    <step name="fallback">
      <execute item_type="tool" item_id="dirigent/util/echo">
        <param name="error" value="\${error.message}"/>
      </execute>
      <assign name="notes" value="Could not read the history: \${error.message}"/>
      <next to="$end"/>
    </step>
    <step name="nothing_to_do">
      <render>No changes since \${state.since}.</render>
      <assign name="notes" value="\${result}"/>
    </step>
  </process>
  <outputs>
    <output name="notes" value="\${state.notes}">The drafted release notes</output>
    <output name="count" value="\${state.count?}">How many commits were read</output>
  </outputs>
</directive>
\`\`\`
`;

/**
 * A realistic 10-step directive: the file name it is parsed as, its whole text, and the XML of
 * its fence alone (what the fast-xml-parser baseline parses).
 */
export const realisticDirective = {
  file: 'bench/release-notes.md',
  text,
  xml: text.slice(text.indexOf('```xml\n') + 7, text.lastIndexOf('\n```')),
} as const;

/**
 * What an item must be before `dirigent sign` signs it (`validateItem`): each kind, read as the
 * engine reads it, with its declared name, category and version checked against its file.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ItemKind } from '../../../src/items/item-kind.js';
import { validateItem, type ItemIssue } from '../../../src/items/validate-item.js';
import { DIRECTIVES } from '../../support/paths.js';

const fence = '```';

let project: string;
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-validate-'));
});
afterEach(() => rmSync(project, { recursive: true, force: true }));

const FOLDERS: Record<ItemKind, string> = {
  directive: 'directives',
  tool: 'tools',
  knowledge: 'knowledge',
};

/** Writes `text` as item `itemId` (file `itemId` + `ext`) of `kind` and validates it. */
async function check(kind: ItemKind, itemId: string, ext: string, text: string) {
  const file = join(project, '.ai', FOLDERS[kind], `${itemId}${ext}`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  const issues = await validateItem(kind, itemId, file, text, project);
  return {
    file,
    issues,
    errors: issues.filter((i) => i.severity !== 'warning'),
    warnings: issues.filter((i) => i.severity === 'warning'),
  };
}

function messages(issues: ItemIssue[]): string[] {
  return issues.map((i) => i.message);
}

/** The example directive, filed under `demo/` (its category must be its folder). */
const HELLO = readFileSync(join(DIRECTIVES, 'hello.md'), 'utf8').replace(
  '<category>examples</category>',
  '<category>demo</category>',
);

function xmlDirective(attributes: string, body = ''): string {
  return `# Demo\n\n${fence}xml\n<directive ${attributes}>\n${body}</directive>\n${fence}\n`;
}

const STEP = `  <process>
    <step name="a">
      <execute item_type="tool" item_id="dirigent/shell/bash">
        <param name="command" value="echo hi"/>
      </execute>
    </step>
  </process>
`;

describe('validateItem: directives', () => {
  it('accepts a directive that parses and compiles, named and filed as it says', async () => {
    expect((await check('directive', 'demo/hello', '.md', HELLO)).issues).toEqual([]);
  });

  it('accepts a YAML graph and a front-matter directive', async () => {
    const graph = `tool_type: graph\nversion: "1.0.0"\ncategory: demo\nconfig:\n  start: only\n  nodes:\n    only:\n      type: return\n`;
    expect((await check('directive', 'demo/flow', '.yaml', graph)).issues).toEqual([]);
    const frontMatter = `---\ndescription: "Answers"\nversion: "1.0.0"\n---\nAnswer the question.\n`;
    expect((await check('directive', 'demo/answer', '.md', frontMatter)).issues).toEqual([]);
  });

  it('reports XML that is not well-formed, at its line', async () => {
    const broken = xmlDirective(
      'name="broken" version="1.0.0"',
      '  <process>\n    <step name="a">\n  </process>\n',
    );
    const { errors, file } = await check('directive', 'broken', '.md', broken);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/not well-formed/);
    expect(errors[0]!.location).toMatchObject({ file, line: 7 });
  });

  it('reports a version that is not semver', async () => {
    const { errors } = await check(
      'directive',
      'old',
      '.md',
      xmlDirective('name="old" version="v1"', STEP),
    );
    expect(messages(errors).join('\n')).toMatch(/not a semantic version/);
  });

  it('reports a name that is not the file name, on the line that declares it', async () => {
    const { errors, file } = await check(
      'directive',
      'demo/hello',
      '.md',
      HELLO.replace('name="hello"', 'name="howdy"'),
    );
    expect(messages(errors)).toEqual(['It is named "howdy" but its file is "hello.md".']);
    expect(errors[0]!.location).toEqual({ file, line: 6, column: 12 });
    expect(errors[0]!.hint).toContain('howdy.md');
  });

  it('reports a category that is not the folder, on the <category> line', async () => {
    const { errors, file } = await check('directive', 'elsewhere/hello', '.md', HELLO);
    expect(messages(errors)).toEqual([
      'Its category "demo" is not its folder "elsewhere" (item elsewhere/hello).',
    ]);
    expect(errors[0]!.location).toMatchObject({ file, line: 9 });
  });
});

const PY_RYE = `"""Says hello."""

__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python_script_runtime"
__category__ = "demo"
__tool_description__ = "Says hello"


def execute(params, project_path):
    return {"greeting": "hi"}
`;

const PY_SELF = `name = "notes"
description = "Keeps notes."
parameters = {"type": "object", "properties": {"key": {"type": "string"}}}


async def execute(params: dict) -> str:
    return "ok"
`;

const YAML_TOOL = `tool_type: shell
version: "1.0.0"
description: Echoes
category: demo
executor_id: rye/core/primitives/subprocess
config:
  command: echo
`;

describe('validateItem: tools', () => {
  it("accepts RYE's Python tools, self-registered Python tools and YAML tools", async () => {
    expect((await check('tool', 'demo/hello', '.py', PY_RYE)).issues).toEqual([]);
    expect((await check('tool', 'notes', '.py', PY_SELF)).issues).toEqual([]);
    expect((await check('tool', 'demo/echo', '.yaml', YAML_TOOL)).issues).toEqual([]);
  });

  it("accepts RYE's current `# ryeos-tool:` header", async () => {
    const header = `# ryeos-tool:\n#   category: demo\n#   version: "1.0.0"\n#   tool_type: python\n#   tool_description: "Greets"\n"""Greets."""\n\nasync def execute(action, project_path, params=None):\n    return {}\n`;
    expect((await check('tool', 'demo/greet', '.py', header)).issues).toEqual([]);
  });

  it('reports Python that does not parse', async () => {
    const { errors } = await check('tool', 'bad', '.py', 'def execute(:\n');
    expect(messages(errors).join('\n')).toMatch(/does not parse/);
  });

  it('reports YAML that does not parse', async () => {
    const { errors } = await check('tool', 'bad', '.yaml', 'tool_type: [\n');
    expect(messages(errors).join('\n')).toMatch(/is not valid YAML/);
  });

  it('reports a tool without a description', async () => {
    const { errors } = await check(
      'tool',
      'demo/mute',
      '.py',
      PY_RYE.replace('__tool_description__ = "Says hello"\n', '').replace('"""Says hello."""', ''),
    );
    expect(messages(errors)).toEqual(['It has no description.']);
  });

  it('reports a version that is not semver, on its line', async () => {
    const { errors, file } = await check(
      'tool',
      'demo/hello',
      '.py',
      PY_RYE.replace('"1.0.0"', '"one"'),
    );
    expect(messages(errors)).toEqual(['Its version "one" is not a semantic version.']);
    expect(errors[0]!.location).toMatchObject({ file, line: 3 });
  });

  it('reports a category that is not the folder', async () => {
    const { errors } = await check('tool', 'other/hello', '.py', PY_RYE);
    expect(messages(errors)).toEqual([
      'Its category "demo" is not its folder "other" (item other/hello).',
    ]);
  });

  it('reports a self-registered name that is not the file name', async () => {
    const { errors } = await check('tool', 'memo', '.py', PY_SELF);
    expect(messages(errors)).toEqual(['It is named "notes" but its file is "memo.py".']);
  });

  // Regression: a tool whose parameter schema ajv cannot compile was signed, and then every
  // call failed with INVALID_TOOL.
  it('reports a parameter schema that is not valid JSON Schema', async () => {
    const { errors } = await check(
      'tool',
      'notes',
      '.py',
      PY_SELF.replace('{"type": "object", "properties"', '{"type": "objekt", "properties"'),
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/^Its parameter schema is not valid JSON Schema: /);
  });

  it('reports a JS tool without its description export', async () => {
    const ts = `export async function execute(params: { a: number }) {\n  return params.a;\n}\n`;
    const { errors } = await check('tool', 'add', '.ts', ts);
    expect(messages(errors).join('\n')).toMatch(/export const description/);
  });

  it('reads JSON and TOML files as data, and reports ones that do not parse', async () => {
    expect((await check('tool', 'cfg', '.json', '{"name": "cfg"}')).issues).toEqual([]);
    expect(messages((await check('tool', 'bad', '.json', '{ nope')).errors)[0]).toMatch(
      /^It is not valid JSON/,
    );
    expect(messages((await check('tool', 'bad', '.toml', 'a = = 1')).errors)[0]).toMatch(
      /^It is not valid TOML/,
    );
  });

  it('validates the text after an old signature line', async () => {
    const signed = `# rye:signed:2026-01-01T00:00:00Z:${'a'.repeat(64)}:${'A'.repeat(86)}==:${'b'.repeat(16)}\n${YAML_TOOL}`;
    expect((await check('tool', 'demo/echo', '.yaml', signed)).issues).toEqual([]);
  });
});

describe('validateItem: knowledge', () => {
  it('accepts --- front matter, a ```yaml fence, a YAML file, and a bare titled text', async () => {
    expect(
      (await check('knowledge', 'demo/a', '.md', '---\ndescription: About a\n---\nBody\n')).issues,
    ).toEqual([]);
    const fenced = `${fence}yaml\nname: b\ndescription: About b\ncategory: demo\n${fence}\n\nBody\n`;
    expect((await check('knowledge', 'demo/b', '.md', fenced)).issues).toEqual([]);
    expect((await check('knowledge', 'demo/c', '.yaml', 'title: C\ncontent: c\n')).issues).toEqual(
      [],
    );
    expect((await check('knowledge', 'demo/d', '.md', '# D\n\nBody\n')).issues).toEqual([]);
  });

  it('reports front matter that is not YAML, at its line', async () => {
    const { errors, file } = await check(
      'knowledge',
      'demo/a',
      '.md',
      '---\ndescription: [unclosed\n---\nBody\n',
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/front matter is not valid YAML/);
    expect(errors[0]!.location).toMatchObject({ file, line: 2 });
  });

  it('reports front matter that is not a mapping', async () => {
    const { errors } = await check('knowledge', 'demo/list', '.yaml', '- a\n- b\n');
    expect(messages(errors).join('\n')).toMatch(/must be a mapping/);
  });

  it('reports an entry with neither description nor title', async () => {
    const { errors } = await check(
      'knowledge',
      'demo/a',
      '.md',
      '---\nversion: "1.0.0"\n---\nBody\n',
    );
    expect(messages(errors)).toEqual(['It has no description and no title.']);
  });

  it('reports a version that is not semver, on its line', async () => {
    const { errors, file } = await check(
      'knowledge',
      'demo/a',
      '.md',
      '---\ndescription: A\nversion: banana\n---\nBody\n',
    );
    expect(messages(errors)).toEqual(['Its version "banana" is not a semantic version.']);
    expect(errors[0]!.location).toEqual({ file, line: 3, column: 1 });
  });

  it('reports an id that is not the item id', async () => {
    const { errors } = await check(
      'knowledge',
      'demo/a',
      '.md',
      '---\nid: other/thing\ndescription: A\n---\nBody\n',
    );
    expect(messages(errors)).toEqual(['Its id "other/thing" is not its item id "demo/a".']);
    expect(errors[0]!.location?.line).toBe(2);
  });

  it('only warns about a category that is not the folder (RYE files knowledge by topic)', async () => {
    const result = await check(
      'knowledge',
      'demo/a',
      '.md',
      '---\ncategory: topics\ndescription: A\n---\nBody\n',
    );
    expect(result.errors).toEqual([]);
    expect(messages(result.warnings)).toEqual([
      'Its category "topics" is not its folder "demo" (item demo/a).',
    ]);
  });
});

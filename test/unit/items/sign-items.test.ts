/**
 * `signItems`, what `dirigent sign` and the sign operation run: find the item (or every item a
 * glob matches) in one writable space, validate it, sign it in place; signed items then verify.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirigentError } from '../../../src/errors/dirigent-error.js';
import { ErrorCode } from '../../../src/errors/error-codes.js';
import {
  signItems,
  type SignedBatch,
  type SignedItem,
  type SignItemsRequest,
} from '../../../src/items/sign-items.js';
import {
  generateSigningKey,
  readSignatureLine,
  signatureStyleFor,
  TrustStore,
  verifyItem,
  writeTrustedKey,
  type GeneratedSigningKey,
} from '../../../src/items/signing/index.js';
import type { Space, SpaceName } from '../../../src/items/space.js';

let base: string;
let spaces: Space[];
let key: GeneratedSigningKey;
let trust: TrustStore;

beforeEach(async () => {
  base = mkdtempSync(join(tmpdir(), 'dirigent-sign-items-'));
  spaces = (['project', 'user', 'system'] as const).map((name) => ({
    name,
    root: join(base, name, '.ai'),
  }));
  key = generateSigningKey();
  trust = new TrustStore(spaces);
  await writeTrustedKey(spaces[1]!.root, key.publicKeyPem, 'ada');
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function put(space: SpaceName, path: string, text: string): string {
  const file = join(base, space, '.ai', path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

function read(file: string): string {
  return readFileSync(file, 'utf8');
}

function request(over: Partial<SignItemsRequest>): SignItemsRequest {
  return {
    kind: 'knowledge',
    itemId: 'notes/a',
    spaces,
    projectDir: join(base, 'project'),
    key,
    ...over,
  };
}

async function signOne(over: Partial<SignItemsRequest>): Promise<SignedItem> {
  const result = await signItems(request(over));
  expect(result.status).toBe('signed');
  return result as SignedItem;
}

async function signGlob(over: Partial<SignItemsRequest>): Promise<SignedBatch> {
  const result = await signItems(request(over));
  expect(result.status).toBe('completed');
  return result as SignedBatch;
}

async function refusal(promise: Promise<unknown>): Promise<DirigentError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DirigentError);
  return err as DirigentError;
}

/** A key argument that fails the test if it is ever read. */
function keyNeverRead(): Promise<GeneratedSigningKey> {
  throw new Error('the signing key was read');
}

const NOTE = (title: string) =>
  `---\ntitle: ${title}\ndescription: About ${title}\n---\n# ${title}\n\nText.\n`;

const TOOL = `"""Says hello."""

__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python_script_runtime"
__category__ = "demo"
__tool_description__ = "Says hello"


def execute(params, project_path):
    return {"greeting": "hi"}
`;

const DIRECTIVE = `# Greet

\`\`\`xml
<directive name="greet" version="1.0.0">
  <metadata>
    <description>Greets.</description>
    <category>demo</category>
  </metadata>
  <process>
    <step name="greet">
      <execute item_type="tool" item_id="dirigent/shell/bash">
        <param name="command" value="echo hello"/>
      </execute>
    </step>
  </process>
</directive>
\`\`\`
`;

/** {@link DIRECTIVE} in RYE's modern layout: the steps after the XML fence. */
const MODERN = `# Greet

\`\`\`xml
<directive name="greet" version="1.0.0">
  <metadata>
    <description>Greets.</description>
    <category>demo</category>
  </metadata>
</directive>
\`\`\`

<process>
  <step name="greet">
    <execute item_type="tool" item_id="dirigent/shell/bash">
      <param name="command" value="echo hello"/>
    </execute>
  </step>
</process>
`;

describe('signItems: one item', () => {
  it('signs a directive in place, and it then verifies against the trust store', async () => {
    const file = put('project', 'directives/demo/greet.md', DIRECTIVE);
    const now = new Date('2026-03-04T05:06:07.890Z');
    const signed = await signOne({ kind: 'directive', itemId: 'demo/greet', now });
    expect(signed).toMatchObject({
      status: 'signed',
      itemId: 'demo/greet',
      file,
      space: 'project',
      signature: { timestamp: '2026-03-04T05:06:07Z', keyId: key.keyId },
      warnings: [],
    });
    const text = read(file);
    expect(text.split('\n').slice(1).join('\n')).toBe(DIRECTIVE);
    const line = readSignatureLine(text, signatureStyleFor(file));
    expect(line).toMatchObject({
      kind: 'signed',
      line: 1,
      signature: { hash: signed.signature.hash, keyId: key.keyId },
    });
    const verification = await verifyItem(file, 'directive', { trust, requireSignatures: true });
    expect(verification).toMatchObject({ status: 'verified', keyId: key.keyId, owner: 'ada' });
  });

  it('signs a tool and a knowledge entry, each with its comment style', async () => {
    const tool = put('project', 'tools/demo/hello.py', TOOL);
    await signOne({ kind: 'tool', itemId: 'demo/hello' });
    expect(read(tool)).toMatch(/^# rye:signed:\S+\n"""Says hello\."""/);
    await expect(
      verifyItem(tool, 'tool', { trust, requireSignatures: true }),
    ).resolves.toMatchObject({ status: 'verified' });

    const note = put('project', 'knowledge/notes/a.md', '# A\n\nText.\n');
    const signed = await signOne({});
    expect(read(note)).toMatch(/^<!-- rye:signed:\S+ -->\n# A\n/);
    expect(signed.signature).toMatchObject({ format: 'rye', keyId: key.keyId });
    await expect(
      verifyItem(note, 'knowledge', { trust, requireSignatures: true }),
    ).resolves.toMatchObject({ status: 'verified', coversWholeFile: true });
  });

  // Regression: `rye:signed` hashes leave out a knowledge entry's `---` front matter and a modern
  // directive's steps after the XML fence, so those could be edited after `dirigent sign`
  // without INTEGRITY_FAILED. Such items now get a `ryeos:signed` line, which covers them.
  it("covers a knowledge entry's front matter with a ryeos:signed line", async () => {
    const note = put('project', 'knowledge/notes/a.md', NOTE('A'));
    const signed = await signOne({});
    expect(signed.signature).toMatchObject({
      format: 'ryeos',
      keyId: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(signed.warnings).toEqual([]);
    expect(read(note)).toMatch(/^<!-- ryeos:signed:\S+ -->\n---\n/);
    await expect(
      verifyItem(note, 'knowledge', { trust, requireSignatures: true }),
    ).resolves.toMatchObject({ status: 'verified', coversWholeFile: true, owner: 'ada' });

    writeFileSync(note, read(note).replace('description: About A', 'description: About B'));
    await expect(
      verifyItem(note, 'knowledge', { trust, requireSignatures: false }),
    ).rejects.toMatchObject({ code: ErrorCode.INTEGRITY_FAILED });
  });

  it("covers the steps after a modern directive's XML fence", async () => {
    const file = put('project', 'directives/demo/greet.md', MODERN);
    const signed = await signOne({ kind: 'directive', itemId: 'demo/greet' });
    expect(signed.signature.format).toBe('ryeos');
    expect(signed.warnings).toEqual([]);
    await expect(
      verifyItem(file, 'directive', { trust, requireSignatures: true }),
    ).resolves.toMatchObject({ status: 'verified', coversWholeFile: true, warnings: [] });

    writeFileSync(file, read(file).replace('echo hello', 'rm -rf ~'));
    await expect(
      verifyItem(file, 'directive', { trust, requireSignatures: false }),
    ).rejects.toMatchObject({ code: ErrorCode.INTEGRITY_FAILED });
  });

  it('keeps CRLF line endings in a ryeos:signed file, which still verifies', async () => {
    const note = put('project', 'knowledge/notes/a.md', NOTE('A').replace(/\n/g, '\r\n'));
    await signOne({});
    const text = read(note);
    expect(text).toMatch(/^<!-- ryeos:signed:\S+ -->\r\n---\r\n/);
    expect(text.replace(/\r\n/g, '')).not.toContain('\n');
    await expect(
      verifyItem(note, 'knowledge', { trust, requireSignatures: true }),
    ).resolves.toMatchObject({ status: 'verified' });
  });

  it('signs in the user space when asked, and only there', async () => {
    const project = put('project', 'knowledge/notes/a.md', NOTE('Project'));
    const user = put('user', 'knowledge/notes/a.md', NOTE('User'));
    const signed = await signOne({ space: 'user' });
    expect(signed).toMatchObject({ space: 'user', file: user });
    expect(read(user)).toMatch(/^<!-- rye(?:os)?:signed:/);
    expect(read(project)).toBe(NOTE('Project'));
  });

  it('replaces the signature line when signing again, even after an edit', async () => {
    const file = put('project', 'knowledge/notes/a.md', NOTE('A'));
    const first = await signOne({ now: new Date('2026-01-01T00:00:00Z') });
    writeFileSync(file, read(file).replace('Text.', 'Better text.'));
    await expect(
      verifyItem(file, 'knowledge', { trust, requireSignatures: false }),
    ).rejects.toMatchObject({ code: ErrorCode.INTEGRITY_FAILED });

    const second = await signOne({ now: new Date('2026-02-02T00:00:00Z') });
    const text = read(file);
    expect(text.match(/rye(?:os)?:signed:/g)).toHaveLength(1);
    expect(text).toContain('2026-02-02T00:00:00Z');
    expect(text).not.toContain('2026-01-01T00:00:00Z');
    expect(second.signature.hash).not.toBe(first.signature.hash);
    expect(text.split('\n').slice(1).join('\n')).toBe(NOTE('A').replace('Text.', 'Better text.'));
    await expect(
      verifyItem(file, 'knowledge', { trust, requireSignatures: true }),
    ).resolves.toMatchObject({ status: 'verified', hash: second.signature.hash });
  });

  it("replaces a RYE `ryeos:signed` line, or a placeholder, with Dirigent's line", async () => {
    const ryeos = `# ryeos:signed:2026-05-31T08:15:56Z:${'a'.repeat(64)}:${'A'.repeat(86)}==:${'b'.repeat(64)}\n`;
    const tool = put('project', 'tools/demo/hello.py', `${ryeos}${TOOL}`);
    await signOne({ kind: 'tool', itemId: 'demo/hello' });
    expect(read(tool).split('\n').slice(1).join('\n')).toBe(TOOL);
    expect(read(tool)).not.toContain('ryeos:signed');

    const placeholder = '<!-- rye:signed:2026-02-10T02:00:00Z:placeholder:unsigned:unsigned -->\n';
    const note = put('project', 'knowledge/notes/a.md', `${placeholder}${NOTE('A')}`);
    await signOne({});
    expect(read(note).split('\n').slice(1).join('\n')).toBe(NOTE('A'));
  });

  it('refuses an item that does not validate, with its issues, and leaves it alone', async () => {
    const text = '---\ndescription: A\nversion: banana\n---\nBody\n';
    const file = put('project', 'knowledge/notes/a.md', text);
    const err = await refusal(signItems(request({})));
    expect(err.code).toBe(ErrorCode.INVALID_ITEM);
    expect(err.message).toBe(
      'knowledge notes/a is not valid, so it was not signed: Its version "banana" is not a semantic version.',
    );
    expect(err.location).toMatchObject({ file, line: 3 });
    expect(err.details?.issues).toHaveLength(1);
    expect(read(file)).toBe(text);
  });

  it('refuses the system space before looking for the item or the key', async () => {
    put('system', 'tools/rye/bash/bash.py', TOOL);
    const err = await refusal(
      signItems(
        request({ kind: 'tool', itemId: 'rye/bash/bash', space: 'system', key: keyNeverRead }),
      ),
    );
    expect(err.code).toBe(ErrorCode.SPACE_READ_ONLY);
    expect(err.hint).toContain('dirigent load tool rye/bash/bash --to project');
  });

  // Regression: the error said "in any space" though only the project space was searched, and a
  // missing key was reported before an unknown item.
  it('says which space lacks an unknown item, before reading the key', async () => {
    const err = await refusal(signItems(request({ itemId: 'notes/none', key: keyNeverRead })));
    expect(err.code).toBe(ErrorCode.UNKNOWN_KNOWLEDGE);
    expect(err.message).toBe('No knowledge "notes/none" in the project space.');
    expect(err.hint).toContain(join(base, 'project', '.ai', 'knowledge'));
  });

  it('says that item ids have no extension', async () => {
    put('project', 'knowledge/notes/a.md', NOTE('A'));
    const err = await refusal(signItems(request({ itemId: 'notes/a.md' })));
    expect(err.code).toBe(ErrorCode.UNKNOWN_KNOWLEDGE);
    expect(err.hint).toContain('Item ids have no extension: try knowledge notes/a.');
  });

  it('points to the space that holds the item', async () => {
    put('user', 'knowledge/notes/mine.md', NOTE('Mine'));
    const inUser = await refusal(signItems(request({ itemId: 'notes/mine' })));
    expect(inUser.code).toBe(ErrorCode.UNKNOWN_KNOWLEDGE);
    expect(inUser.hint).toMatch(/It is in the user space .*: sign it there \(--space user\)\./);

    put('system', 'tools/rye/bash/bash.py', TOOL);
    const inSystem = await refusal(signItems(request({ kind: 'tool', itemId: 'rye/bash/bash' })));
    expect(inSystem.code).toBe(ErrorCode.UNKNOWN_TOOL);
    expect(inSystem.hint).toContain('read-only');
    expect(inSystem.hint).toContain('dirigent load tool rye/bash/bash --to project');
  });

  it("reports the key's own error once the item is found", async () => {
    put('project', 'knowledge/notes/a.md', NOTE('A'));
    const noKey = () =>
      Promise.reject(DirigentError.fatal(ErrorCode.NO_SIGNING_KEY, 'No signing key in /nowhere.'));
    const err = await refusal(signItems(request({ key: noKey })));
    expect(err.code).toBe(ErrorCode.NO_SIGNING_KEY);
  });

  it('refuses an item id that leaves the space', async () => {
    const err = await refusal(signItems(request({ itemId: '../../outside' })));
    expect(err.code).toBe(ErrorCode.INVALID_ITEM_ID);
  });
});

describe('signItems: globs', () => {
  it('signs every match, reports the invalid one without stopping, and leaves it alone', async () => {
    const a = put('project', 'knowledge/notes/a.md', NOTE('A'));
    const bad = '---\ndescription: [unclosed\n---\nBody\n';
    const b = put('project', 'knowledge/notes/b.md', bad);
    const c = put('project', 'knowledge/notes/c.md', NOTE('C'));
    const other = put('project', 'knowledge/other/d.md', NOTE('D'));

    const batch = await signGlob({ itemId: 'notes/*' });
    expect(batch.total).toBe(3);
    expect(batch.signed).toEqual(['notes/a', 'notes/c']);
    expect(batch.items.map((i) => i.file)).toEqual([a, c]);
    expect(batch.failed).toHaveLength(1);
    expect(batch.failed[0]).toMatchObject({
      itemId: 'notes/b',
      error: { code: ErrorCode.INVALID_ITEM },
      issues: [{ location: { file: b, line: 2 } }],
    });
    expect(batch.failed[0]!.issues![0]!.message).toMatch(/front matter is not valid YAML/);
    expect(read(b)).toBe(bad);
    expect(read(other)).toBe(NOTE('D'));
    for (const file of [a, c]) {
      await expect(
        verifyItem(file, 'knowledge', { trust, requireSignatures: true }),
      ).resolves.toMatchObject({ status: 'verified' });
    }
  });

  it('matches at any depth without "/", and skips helpers and the tool registry', async () => {
    put('project', 'tools/demo/hello.py', TOOL);
    put('project', 'tools/deep/er/hello.py', TOOL.replace('"demo"', '"deep/er"'));
    put('project', 'tools/demo/__init__.py', '');
    put('project', 'tools/demo/_helper.py', 'x = 1\n');
    put('project', 'tools/.hidden/hello.py', TOOL);
    put('project', 'tools/enabled.json', '{"tools": {}}\n');
    const batch = await signGlob({ kind: 'tool', itemId: 'hel*' });
    expect(batch.signed).toEqual(['deep/er/hello', 'demo/hello']);
    expect(batch.failed).toEqual([]);
    expect(read(join(base, 'project', '.ai', 'tools', 'enabled.json'))).toBe('{"tools": {}}\n');

    const all = await signGlob({ kind: 'tool', itemId: '*' });
    expect(all.signed).toEqual(['deep/er/hello', 'demo/hello']);
  });

  it('reads the key once, after the glob matched', async () => {
    put('project', 'knowledge/notes/a.md', NOTE('A'));
    put('project', 'knowledge/notes/b.md', NOTE('B'));
    let reads = 0;
    const batch = await signGlob({
      itemId: 'notes/?',
      key: () => {
        reads++;
        return Promise.resolve(key);
      },
    });
    expect(batch.signed).toEqual(['notes/a', 'notes/b']);
    expect(reads).toBe(1);
  });

  it('refuses a glob that matches nothing in the space, naming where it looked', async () => {
    put('user', 'knowledge/notes/a.md', NOTE('A'));
    const err = await refusal(signItems(request({ itemId: 'notes/*', key: keyNeverRead })));
    expect(err.code).toBe(ErrorCode.UNKNOWN_KNOWLEDGE);
    expect(err.message).toBe('No knowledge in the project space matches "notes/*".');
    expect(err.hint).toContain(join(base, 'project', '.ai', 'knowledge'));
  });

  it('refuses a missing key once, not item by item', async () => {
    put('project', 'knowledge/notes/a.md', NOTE('A'));
    const noKey = () => Promise.reject(DirigentError.fatal(ErrorCode.NO_SIGNING_KEY, 'No key.'));
    const err = await refusal(signItems(request({ itemId: 'notes/*', key: noKey })));
    expect(err.code).toBe(ErrorCode.NO_SIGNING_KEY);
  });
});

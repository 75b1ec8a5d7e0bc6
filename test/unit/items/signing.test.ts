import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirigentError } from '../../../src/errors/dirigent-error.js';
import type { ItemKind } from '../../../src/items/item-kind.js';
import {
  formatSignatureLine,
  generateSigningKey,
  keyFingerprint,
  readSignatureLine,
  signatureStyleFor,
  signedContentHash,
  signItem,
  TrustStore,
  verifyItem,
  writeTrustedKey,
  type GeneratedSigningKey,
  type Verification,
} from '../../../src/items/signing/index.js';
import type { Space } from '../../../src/items/space.js';

const fence = '```';

const PY = `"""Say hello."""

__version__ = "1.0.0"
__tool_type__ = "python"


def execute(params, project_path):
    return {"greeting": "hello " + params["name"]}
`;

const YAML = `tool_type: graph
version: "1.0.0"
config:
  start: only
  nodes:
    only:
      type: return
`;

const TS = `/** Adds two numbers. */
export async function execute(params: { a: number; b: number }) {
  return { sum: params.a + params.b };
}
`;

const MODERN = `<!-- rye:signed:2026-02-10T02:00:00Z:placeholder:unsigned:unsigned -->
# Greet

Greets someone.

${fence}xml
<directive name="greet" version="1.0.0">
  <metadata>
    <description>Greets someone.</description>
  </metadata>
  <inputs>
    <input name="name" type="string" default="world">Who</input>
  </inputs>
</directive>
${fence}

<process>
  <step name="greet">
    <execute item_type="tool" item_id="dirigent/shell/bash">
      <param name="command" value="echo hello"/>
    </execute>
  </step>
</process>
`;

const LEGACY = `# Greet

${fence}xml
<directive name="greet" version="1.0.0">
  <process>
    <step name="greet">
      <execute item_type="tool" item_id="dirigent/shell/bash">
        <param name="command" value="echo hello"/>
      </execute>
    </step>
  </process>
</directive>
${fence}
`;

let base: string;
let spaces: Space[];
let trust: TrustStore;
let key: GeneratedSigningKey;
let stranger: GeneratedSigningKey;

beforeEach(async () => {
  base = mkdtempSync(join(tmpdir(), 'dirigent-signing-'));
  spaces = (['project', 'user', 'system'] as const).map((name) => ({
    name,
    root: join(base, name, '.ai'),
  }));
  trust = new TrustStore(spaces);
  key = generateSigningKey();
  stranger = generateSigningKey();
  await writeTrustedKey(spaces[0]!.root, key.publicKeyPem, 'ada');
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function put(path: string, text: string): string {
  const file = join(base, 'project', '.ai', path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

function edit(file: string, from: string, to: string): void {
  const text = readFileSync(file, 'utf8');
  expect(text).toContain(from);
  writeFileSync(file, text.replace(from, to));
}

function verify(file: string, kind: ItemKind, requireSignatures = false): Promise<Verification> {
  return verifyItem(file, kind, { trust, requireSignatures });
}

async function refusal(promise: Promise<unknown>): Promise<DirigentError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DirigentError);
  return err as DirigentError;
}

describe('signItem → verifyItem', () => {
  it.each([
    ['tools/demo/hello.py', 'tool', PY, /^# rye:signed:[^\n]+:[a-f0-9]{16}\n"""Say hello/],
    ['tools/demo/graph.yaml', 'tool', YAML, /^# rye:signed:[^\n]+\ntool_type: graph/],
    ['tools/demo/add.ts', 'tool', TS, /^\/\/ rye:signed:[^\n]+\n\/\*\* Adds/],
    ['directives/greet.md', 'directive', LEGACY, /^<!-- rye:signed:[^\n]+ -->\n# Greet/],
    ['knowledge/notes.md', 'knowledge', '# Notes\n\nSome facts.\n', /^<!-- rye:signed:.+ -->\n#/],
  ] as const)('round-trips %s', async (path, kind, text, shape) => {
    const file = put(path, text);
    const signed = await signItem(file, kind, key);
    expect(readFileSync(file, 'utf8')).toMatch(shape);
    expect(signed.keyId).toBe(key.keyId);
    expect(signed.line).toMatch(/:[A-Za-z0-9_-]{86}==:/);
    const v = await verify(file, kind, true);
    expect(v).toMatchObject({ status: 'verified', keyId: key.keyId, owner: 'ada', warnings: [] });
    expect(v.coversWholeFile).toBe(true);
  });

  it('replaces a placeholder or old signature line instead of adding a second one', async () => {
    const file = put('directives/greet.md', MODERN);
    await signItem(file, 'directive', stranger);
    await signItem(file, 'directive', key);
    const text = readFileSync(file, 'utf8');
    expect(text.match(/rye:signed/g)).toHaveLength(1);
    expect(text.split('\n').slice(1).join('\n')).toBe(MODERN.split('\n').slice(1).join('\n'));
    expect((await verify(file, 'directive')).status).toBe('verified');
  });

  it('puts the line after a shebang for tools, and hashes neither', async () => {
    const file = put('tools/demo/run.py', `#!/usr/bin/env python3\n${PY}`);
    await signItem(file, 'tool', key);
    await signItem(file, 'tool', key);
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines[0]).toBe('#!/usr/bin/env python3');
    expect(lines[1]).toMatch(/^# rye:signed:/);
    expect(lines[2]).toBe('"""Say hello."""');
    const v = await verify(file, 'tool', true);
    expect(v.status).toBe('verified');
    expect(signedContentHash(readFileSync(file, 'utf8'), 'tool', file).hash).toBe(
      signedContentHash(PY, 'tool', file).hash,
    );
  });

  it('keeps CRLF line endings, and verifies them the way RYE reads them', async () => {
    const file = put('tools/demo/hello.py', PY.replace(/\n/g, '\r\n'));
    const signed = await signItem(file, 'tool', key);
    const text = readFileSync(file, 'utf8');
    expect(text.split('\r\n')[0]).toBe(signed.line);
    expect(text.replace(/\r\n/g, '')).not.toContain('\n');
    expect(signed.hash).toBe(signedContentHash(PY, 'tool', 'x.py').hash);
    expect((await verify(file, 'tool', true)).status).toBe('verified');
  });
});

describe('tampering', () => {
  it('refuses a tool changed by one byte, always, with both hashes', async () => {
    const file = put('tools/demo/hello.py', PY);
    const signed = await signItem(file, 'tool', key);
    edit(file, '"hello "', '"hellO "');
    const err = await refusal(verify(file, 'tool'));
    expect(err.code).toBe('INTEGRITY_FAILED');
    expect(err.message).toContain(`${file} was modified after it was signed`);
    expect(err.message).toContain('dirigent sign');
    expect(err.location).toEqual({ file, line: 1, column: 1 });
    expect(err.details).toMatchObject({ expectedHash: signed.hash, keyId: key.keyId });
    expect(err.details?.actualHash).not.toBe(signed.hash);
  });

  it('refuses a tampered file even when its key is not trusted', async () => {
    const file = put('tools/demo/hello.py', PY);
    await signItem(file, 'tool', stranger);
    edit(file, 'hello', 'bye');
    expect((await refusal(verify(file, 'tool'))).code).toBe('INTEGRITY_FAILED');
  });

  it('accepts a modern directive edited only after the fence, with a warning, where signatures are not required', async () => {
    const file = put('directives/greet.md', MODERN);
    const signed = await signItem(file, 'directive', key);
    expect(signed.coversWholeFile).toBe(false);
    expect(signed.warnings[0]).toContain('<process>');
    edit(file, 'echo hello', 'rm -rf ~');
    const v = await verify(file, 'directive');
    expect(v.status).toBe('verified');
    expect(v.coversWholeFile).toBe(false);
    expect(v.warnings).toHaveLength(1);
    expect(v.warnings[0]).toMatch(/does not cover the \d+ lines after the XML fence/);
    expect(v.warnings[0]).toContain('<process> steps');
  });

  it('refuses, where signatures are required, a directive whose signature leaves its steps out', async () => {
    const file = put('directives/greet.md', MODERN);
    await signItem(file, 'directive', key);
    edit(file, 'echo hello', 'rm -rf ~');
    const err = await refusal(verify(file, 'directive', true));
    expect(err.code).toBe('PARTIAL_SIGNATURE');
    expect(err.message).toContain('does not cover the');
    expect(err.message).toContain('<process> steps');
    expect(err.hint).toContain('dirigent sign directive');
    expect(err.hint).toContain('ryeos:signed');
    expect(err.location).toEqual({ file, line: 1, column: 1 });
  });

  it('refuses a directive edited inside <directive>', async () => {
    const file = put('directives/greet.md', MODERN);
    await signItem(file, 'directive', key);
    edit(file, 'default="world"', 'default="mars"');
    const err = await refusal(verify(file, 'directive'));
    expect(err.code).toBe('INTEGRITY_FAILED');
  });

  it('covers a legacy directive whole, so editing its steps is refused', async () => {
    const file = put('directives/greet.md', LEGACY);
    await signItem(file, 'directive', key);
    edit(file, 'echo hello', 'rm -rf ~');
    expect((await refusal(verify(file, 'directive'))).code).toBe('INTEGRITY_FAILED');
  });
});

describe('policy', () => {
  it('allows an unsigned item with a warning by default and refuses it when signatures are required', async () => {
    const file = put('tools/demo/hello.py', PY);
    expect(await verify(file, 'tool')).toEqual({
      status: 'unsigned',
      warnings: [`${file} is not signed.`],
    });
    const err = await refusal(verify(file, 'tool', true));
    expect(err.code).toBe('UNSIGNED_ITEM');
    expect(err.hint).toContain('dirigent sign');
  });

  it('does not refuse an unsigned item of the system space, which ships with Dirigent', async () => {
    const file = put('tools/demo/hello.py', PY);
    const system = { trust: new TrustStore([]), requireSignatures: true, space: 'system' as const };
    expect(await verifyItem(file, 'tool', system)).toMatchObject({ status: 'unsigned' });
    // A system item that is signed must still verify.
    const key = generateSigningKey();
    await signItem(file, 'tool', key);
    writeFileSync(file, readFileSync(file, 'utf8').replace('hello', 'HELLO'));
    const err = await refusal(verifyItem(file, 'tool', system));
    expect(err.code).toBe('INTEGRITY_FAILED');
  });

  it('treats placeholder, rye:validated and kiwi-mcp lines as unsigned', async () => {
    for (const line of [
      '# rye:signed:2026-01-01T00:00:00Z:placeholder:unsigned:unsigned',
      '# rye:validated:2026-01-01T00:00:00Z:abc',
      '# kiwi-mcp:validated:2026-01-01T00:00:00Z:abc',
    ]) {
      const file = put('tools/demo/hello.py', `${line}\n${PY}`);
      const v = await verify(file, 'tool');
      expect(v.status).toBe('unsigned');
      expect(v.warnings[0]).toContain('not a signature');
      expect((await refusal(verify(file, 'tool', true))).code).toBe('UNSIGNED_ITEM');
    }
  });

  it('reports an untrusted key, and refuses it when signatures are required', async () => {
    const file = put('tools/demo/hello.py', PY);
    await signItem(file, 'tool', stranger);
    const v = await verify(file, 'tool');
    expect(v).toMatchObject({ status: 'untrusted', keyId: stranger.keyId });
    expect(v.warnings[0]).toContain('not trusted');
    const err = await refusal(verify(file, 'tool', true));
    expect(err.code).toBe('UNTRUSTED_KEY');
    expect(err.hint).toContain(`${stranger.keyId}.toml`);
    expect(err.hint).toContain('.ai/trusted_keys/');
    expect(err.details?.keyId).toBe(stranger.keyId);
  });

  it("refuses a signature by another key that claims a trusted key's fingerprint", async () => {
    const file = put('tools/demo/hello.py', PY);
    await signItem(file, 'tool', stranger);
    edit(file, `:${stranger.keyId}\n`, `:${key.keyId}\n`);
    for (const required of [false, true]) {
      const err = await refusal(verify(file, 'tool', required));
      expect(err.code).toBe('BAD_SIGNATURE');
      expect(err.details?.keyId).toBe(key.keyId);
    }
  });
});

describe('TrustStore', () => {
  it("ignores a key file whose key's fingerprint is not its name", async () => {
    // The stranger's key filed under the trusted key's name, and a file signed to match.
    const dir = join(spaces[0]!.root, 'trusted_keys');
    rmSync(dir, { recursive: true });
    const { file: real } = await writeTrustedKey(spaces[0]!.root, stranger.publicKeyPem, 'eve');
    const forged = join(dir, `${key.keyId}.toml`);
    writeFileSync(forged, readFileSync(real, 'utf8').replace(stranger.keyId, key.keyId));
    rmSync(real);
    const lookup = await trust.lookup(key.keyId);
    expect(lookup.key).toBeUndefined();
    expect(lookup.skipped).toEqual([
      { file: forged, reason: expect.stringContaining(stranger.keyId) },
    ]);

    const file = put('tools/demo/hello.py', PY);
    await signItem(file, 'tool', stranger);
    edit(file, `:${stranger.keyId}\n`, `:${key.keyId}\n`);
    expect((await verify(file, 'tool')).status).toBe('untrusted');
  });

  it("reads RYE B's config/keys/trusted/, project before user before system", async () => {
    const other = generateSigningKey();
    for (const [i, owner] of [
      [1, 'user'],
      [2, 'system'],
    ] as const) {
      const { file } = await writeTrustedKey(spaces[i]!.root, other.publicKeyPem, owner);
      const b = join(spaces[i]!.root, 'config', 'keys', 'trusted', `${other.keyId}.toml`);
      mkdirSync(dirname(b), { recursive: true });
      writeFileSync(b, `# rye:signed:x\nversion = "1.0.0"\n${readFileSync(file, 'utf8')}`);
      rmSync(file);
    }
    expect((await trust.get(other.keyId))?.owner).toBe('user');
    await writeTrustedKey(spaces[0]!.root, other.publicKeyPem, 'project');
    const found = await trust.get(other.keyId);
    expect(found).toMatchObject({ owner: 'project', space: 'project', keyId: other.keyId });
  });

  it("computes RYE's fingerprint: SHA-256 of the PEM text, first 16 hex", () => {
    const pem =
      '-----BEGIN PUBLIC KEY-----\n' +
      'MCowBQYDK2VwAyEAY24FNlBttfGlH91xaEe4Ms0Meu5kvHL8L8W6w9lVyLU=\n' +
      '-----END PUBLIC KEY-----\n';
    expect(keyFingerprint(pem)).toBe('9fbfabe975fa5a7f');
  });
});

describe('signature lines', () => {
  const sig = {
    timestamp: '2026-02-15T07:11:46Z',
    hash: 'a'.repeat(64),
    signature: `${'b'.repeat(86)}==`,
    keyId: '440443d0858f0199',
    registry: { provider: 'rye-registry', username: 'leo' },
  };

  it.each([
    [
      'x.md',
      `<!-- rye:signed:2026-02-15T07:11:46Z:${'a'.repeat(64)}:${'b'.repeat(86)}==:440443d0858f0199|rye-registry@leo -->`,
    ],
    [
      'x.py',
      `# rye:signed:2026-02-15T07:11:46Z:${'a'.repeat(64)}:${'b'.repeat(86)}==:440443d0858f0199|rye-registry@leo`,
    ],
    [
      'x.mjs',
      `// rye:signed:2026-02-15T07:11:46Z:${'a'.repeat(64)}:${'b'.repeat(86)}==:440443d0858f0199|rye-registry@leo`,
    ],
  ])('formats and reads the %s form with a provenance suffix', (file, line) => {
    const style = signatureStyleFor(file);
    expect(formatSignatureLine(sig, style)).toBe(line);
    expect(readSignatureLine(`${line}\nrest\n`, style)).toEqual({
      kind: 'signed',
      line: 1,
      text: line,
      signature: sig,
    });
  });

  it('verifies a signed line that carries a provenance suffix', async () => {
    const file = put('tools/demo/hello.py', PY);
    await signItem(file, 'tool', key);
    edit(file, `:${key.keyId}\n`, `:${key.keyId}|rye-registry@ada\n`);
    expect((await verify(file, 'tool', true)).status).toBe('verified');
  });

  it('reads line 1 only for TOML, whatever follows', () => {
    const line = formatSignatureLine(sig, signatureStyleFor('x.toml'));
    expect(readSignatureLine(`#!/bin/sh\n${line}\n`, signatureStyleFor('x.toml'))).toBeUndefined();
    expect(readSignatureLine(`#!/bin/sh\n${line}\n`, signatureStyleFor('x.sh'))?.line).toBe(2);
  });

  it('calls a line that starts like a signature but does not parse malformed', () => {
    const line = readSignatureLine('# rye:signed:yesterday:abc\n', signatureStyleFor('x.py'));
    expect(line).toMatchObject({ kind: 'not-signed', reason: 'malformed' });
  });
});

describe('errors', () => {
  it('survive DirigentError.toJSON / fromJSON', async () => {
    const tool = put('tools/demo/hello.py', PY);
    const errors = [await refusal(verify(tool, 'tool', true))];
    await signItem(tool, 'tool', stranger);
    errors.push(await refusal(verify(tool, 'tool', true)));
    edit(tool, `:${stranger.keyId}\n`, `:${key.keyId}\n`);
    errors.push(await refusal(verify(tool, 'tool', true)));
    edit(tool, 'hello', 'bye');
    errors.push(await refusal(verify(tool, 'tool', true)));
    expect(errors.map((e) => e.code)).toEqual([
      'UNSIGNED_ITEM',
      'UNTRUSTED_KEY',
      'BAD_SIGNATURE',
      'INTEGRITY_FAILED',
    ]);
    for (const err of errors) {
      const back = DirigentError.fromJSON(JSON.parse(JSON.stringify(err.toJSON())));
      expect(back.toJSON()).toEqual(err.toJSON());
      expect(back.location?.file).toBe(tool);
      expect(back.describe()).toBe(err.describe());
    }
  });
});

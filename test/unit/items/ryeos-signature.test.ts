/**
 * RYE OS's current signature lines, `ryeos:signed:TIMESTAMP:HASH:SIG:FINGERPRINT` (hash of the
 * bytes after the line, standard base64, 64-hex fingerprint of the raw key): real files signed
 * by RYE's own tooling verify, and any change to them is refused.
 */
import { createPublicKey, sign, verify as verifySignature } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirigentError } from '../../../src/errors/dirigent-error.js';
import { ErrorCode } from '../../../src/errors/error-codes.js';
import type { ItemKind } from '../../../src/items/item-kind.js';
import {
  generateSigningKey,
  readSignatureLine,
  ryeosKeyFingerprint,
  sha256Hex,
  signatureStyleFor,
  signItem,
  trustKey,
  TrustStore,
  verifyItem,
  writeTrustedKey,
  type GeneratedSigningKey,
} from '../../../src/items/signing/index.js';
import type { Space } from '../../../src/items/space.js';
import { REPO_ROOT } from '../../support/paths.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'ryeos');
/** RYE's development publisher key, which signed the fixtures (`.dev-keys/` in RYE's repo). */
const RYE_DEV_KEY = '741a8bc609b398aaec0685e5aefb682faf5129a66bd192f888d23bb642c18eea';

/** The fixtures: item files signed by RYE OS, and their kinds. */
const SIGNED_BY_RYE: [string, ItemKind][] = [
  ['knowledge/ryeos/core/tools/verify.md', 'knowledge'],
  ['directives/ryeos/ops/base.md', 'directive'],
  ['tools/ryeos/core/verbs/list.yaml', 'tool'],
  ['tools/test/test_registry_tool.py', 'tool'],
];

let base: string;
let spaces: Space[];

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'dirigent-ryeos-'));
  spaces = (['project', 'user', 'system'] as const).map((name) => ({
    name,
    root: join(base, name, '.ai'),
  }));
  // The project holds RYE's files and, in config/keys/trusted/, the key that signed them.
  cpSync(join(FIXTURES, '.ai'), spaces[0]!.root, { recursive: true });
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function item(path: string): string {
  return join(spaces[0]!.root, path);
}

/** Writes an item file of the project (its folders too) and returns its path. */
function put(path: string, text: string): string {
  const file = item(path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

function verify(file: string, kind: ItemKind, requireSignatures = true) {
  return verifyItem(file, kind, { trust: new TrustStore(spaces), requireSignatures });
}

async function refusal(promise: Promise<unknown>): Promise<DirigentError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DirigentError);
  return err as DirigentError;
}

/** Changes one byte of the file, `at` bytes from its end (after the signature line). */
function flipByte(file: string, at = 2): void {
  const bytes = readFileSync(file);
  const i = bytes.length - at;
  bytes[i] = bytes[i] === 0x61 ? 0x62 : 0x61;
  writeFileSync(file, bytes);
}

describe('files signed by RYE OS', () => {
  it.each(SIGNED_BY_RYE)('%s verifies against the key that signed it', async (path, kind) => {
    const file = item(path);
    const line = readSignatureLine(readFileSync(file, 'utf8'), signatureStyleFor(file));
    expect(line).toMatchObject({ kind: 'signed', line: 1, scheme: 'ryeos' });
    const verification = await verify(file, kind);
    expect(verification).toMatchObject({
      status: 'verified',
      keyId: RYE_DEV_KEY,
      owner: 'ryeos-dev',
      coversWholeFile: true,
      warnings: [],
    });
  });

  it.each(SIGNED_BY_RYE)(
    '%s changed by one byte is refused: INTEGRITY_FAILED',
    async (path, kind) => {
      const file = item(path);
      flipByte(file);
      // Refused whether or not the project requires signatures.
      for (const required of [true, false]) {
        const err = await refusal(verify(file, kind, required));
        expect(err.code).toBe(ErrorCode.INTEGRITY_FAILED);
        expect(err.message).toContain('was modified after it was signed');
        expect(err.details).toMatchObject({ keyId: RYE_DEV_KEY });
      }
    },
  );

  // RYE's current lines hash everything after the line: unlike `rye:signed` lines on knowledge,
  // the `---` front matter is covered.
  it("refuses an edit to a knowledge entry's front matter", async () => {
    const file = item('knowledge/ryeos/core/tools/verify.md');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('version: "1.0.0"', 'version: "1.0.1"'));
    expect((await refusal(verify(file, 'knowledge'))).code).toBe(ErrorCode.INTEGRITY_FAILED);
  });

  it('still verifies in a checkout with CRLF line endings', async () => {
    const file = item('tools/ryeos/core/verbs/list.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/\n/g, '\r\n'));
    await expect(verify(file, 'tool')).resolves.toMatchObject({ status: 'verified' });
  });

  it('refuses a signature that is not the Ed25519 signature of the hash: BAD_SIGNATURE', async () => {
    const file = item('tools/test/test_registry_tool.py');
    const text = readFileSync(file, 'utf8');
    const line = readSignatureLine(text, signatureStyleFor(file));
    if (line?.kind !== 'signed') throw new Error('the fixture is not signed');
    const forged = line.signature.signature.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'));
    writeFileSync(file, text.replace(line.signature.signature, forged));
    const err = await refusal(verify(file, 'tool', false));
    expect(err.code).toBe(ErrorCode.BAD_SIGNATURE);
  });

  it('is untrusted without its key: a warning, or UNTRUSTED_KEY when signatures are required', async () => {
    rmSync(join(spaces[0]!.root, 'config'), { recursive: true });
    const file = item('knowledge/ryeos/core/tools/verify.md');
    const verification = await verify(file, 'knowledge', false);
    expect(verification).toMatchObject({ status: 'untrusted', keyId: RYE_DEV_KEY });
    expect(verification.warnings[0]).toContain(
      `signed by key ${RYE_DEV_KEY}, which is not trusted`,
    );
    const err = await refusal(verify(file, 'knowledge', true));
    expect(err.code).toBe(ErrorCode.UNTRUSTED_KEY);
    expect(err.hint).toContain('dirigent keys trust');
  });

  it("verifies once `dirigent keys trust` took RYE's publisher trust document", async () => {
    rmSync(join(spaces[0]!.root, 'config'), { recursive: true });
    const doc = readFileSync(join(FIXTURES, 'PUBLISHER_DEV_TRUST.toml'), 'utf8');
    const written = await trustKey(spaces[1]!.root, doc);
    expect(written).toMatchObject({ fingerprint: RYE_DEV_KEY, owner: 'ryeos-dev' });
    // Filed under its 16-hex fingerprint, found by its 64-hex one.
    expect(written.file).toBe(join(spaces[1]!.root, 'trusted_keys', `${written.keyId}.toml`));
    for (const [path, kind] of SIGNED_BY_RYE) {
      await expect(verify(item(path), kind)).resolves.toMatchObject({
        status: 'verified',
        owner: 'ryeos-dev',
      });
    }
  });
});

/** Writes `body` with a `ryeos:signed` line made as RYE makes them, by `key`. */
function ryeosSigned(
  key: GeneratedSigningKey,
  body: string,
  comment: (payload: string) => string,
  timestamp = '2026-05-31T08:15:56Z',
): string {
  const hash = sha256Hex(body);
  const signature = sign(null, Buffer.from(hash, 'utf8'), key.privateKeyPem).toString('base64');
  const fingerprint = ryeosKeyFingerprint(createPublicKey(key.publicKeyPem));
  return `${comment(`ryeos:signed:${timestamp}:${hash}:${signature}:${fingerprint}`)}\n${body}`;
}

describe('ryeos:signed lines', () => {
  let key: GeneratedSigningKey;
  beforeEach(async () => {
    key = generateSigningKey();
    await writeTrustedKey(spaces[1]!.root, key.publicKeyPem, 'ada');
  });

  it('reads the fields from the right, so the timestamp may hold colons', async () => {
    const text = ryeosSigned(key, 'a: 1\n', (p) => `# ${p}`, '2026-05-31T08:15:56+00:00');
    const file = put('tools/demo/colons.yaml', text);
    const line = readSignatureLine(text, signatureStyleFor(file));
    expect(line).toMatchObject({
      kind: 'signed',
      scheme: 'ryeos',
      signature: { timestamp: '2026-05-31T08:15:56+00:00' },
    });
    await expect(verify(file, 'tool')).resolves.toMatchObject({ status: 'verified', owner: 'ada' });
  });

  it('verifies Markdown, `#` and `//` comments, and the line after a shebang', async () => {
    const cases: [string, ItemKind, string, (p: string) => string][] = [
      ['knowledge/demo/note.md', 'knowledge', '---\ntitle: N\n---\nText\n', (p) => `<!-- ${p} -->`],
      ['tools/demo/tool.py', 'tool', 'x = 1\n', (p) => `# ${p}`],
      ['tools/demo/tool.ts', 'tool', 'export const x = 1;\n', (p) => `// ${p}`],
    ];
    for (const [path, kind, body, comment] of cases) {
      const file = put(path, ryeosSigned(key, body, comment));
      await expect(verify(file, kind)).resolves.toMatchObject({ status: 'verified' });
    }
    const signed = ryeosSigned(key, 'print(1)\n', (p) => `# ${p}`);
    const script = put('tools/demo/script.py', `#!/usr/bin/env python3\n${signed}`);
    await expect(verify(script, 'tool')).resolves.toMatchObject({ status: 'verified' });
  });

  it('treats a line that is not four fields (such as a placeholder) as unsigned', async () => {
    const file = put('tools/demo/placeholder.yaml', '# ryeos:signed placeholder\na: 1\n');
    expect(readSignatureLine(readFileSync(file, 'utf8'), signatureStyleFor(file))).toMatchObject({
      kind: 'not-signed',
      reason: 'placeholder',
    });
    await expect(verify(file, 'tool', false)).resolves.toMatchObject({ status: 'unsigned' });
    expect((await refusal(verify(file, 'tool', true))).code).toBe(ErrorCode.UNSIGNED_ITEM);
  });

  it('is what signItem writes with wholeFile, as RYE checks it: the bytes after the line', async () => {
    const body = '---\ntitle: N\nversion: "1.0.0"\n---\nText\n';
    const file = put('knowledge/demo/note.md', body);
    const result = await signItem(file, 'knowledge', key, { wholeFile: true });
    const text = readFileSync(file, 'utf8');
    const fields =
      /^<!-- ryeos:signed:([^:]+:[^:]+:[^:]+):([0-9a-f]{64}):([A-Za-z0-9+/]+={0,2}):([0-9a-f]{64}) -->\n/.exec(
        text,
      );
    expect(fields, text).not.toBeNull();
    const [line, , hash, signature, fingerprint] = fields!;
    // Checked here without Dirigent's verifier: RYE's own rules.
    expect(text.slice(line.length)).toBe(body);
    expect(hash).toBe(sha256Hex(body));
    expect(fingerprint).toBe(ryeosKeyFingerprint(createPublicKey(key.publicKeyPem)));
    expect(
      verifySignature(
        null,
        Buffer.from(hash!, 'utf8'),
        key.publicKeyPem,
        Buffer.from(signature!, 'base64'),
      ),
    ).toBe(true);
    expect(result).toMatchObject({
      format: 'ryeos',
      keyId: fingerprint,
      hash,
      coversWholeFile: true,
    });
  });

  it('is not used by signItem where a rye:signed line covers the whole item', async () => {
    const file = put('tools/demo/tool.py', 'x = 1\n');
    const result = await signItem(file, 'tool', key, { wholeFile: true });
    expect(result).toMatchObject({ format: 'rye', keyId: key.keyId, coversWholeFile: true });
    expect(readFileSync(file, 'utf8')).toMatch(/^# rye:signed:/);
  });

  it('is replaced by a `rye:signed` line when Dirigent signs the file again', async () => {
    const file = item('tools/ryeos/core/verbs/list.yaml');
    const body = readFileSync(file, 'utf8').split('\n').slice(1).join('\n');
    await signItem(file, 'tool', key);
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(/^# rye:signed:/);
    expect(text.split('\n').slice(1).join('\n')).toBe(body);
    await expect(verify(file, 'tool')).resolves.toMatchObject({
      status: 'verified',
      keyId: key.keyId,
    });
  });
});

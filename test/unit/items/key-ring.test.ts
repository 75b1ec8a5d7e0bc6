/**
 * The key ring `dirigent keys` manages: the user's signing key (made, read, refused when others
 * can read it) and the trusted-key files of each space (trusted from a PEM or RYE's TOML, listed,
 * revoked by fingerprint or prefix).
 */
import { createPublicKey } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirigentError } from '../../../src/errors/dirigent-error.js';
import { ErrorCode } from '../../../src/errors/error-codes.js';
import {
  generateSigningKey,
  initSigningKey,
  keyFingerprint,
  listTrustedKeys,
  readSigningKey,
  revokeKey,
  ryeosKeyFingerprint,
  signingKeyDir,
  trustKey,
  TrustStore,
  writeTrustedKey,
} from '../../../src/items/signing/index.js';
import type { Space } from '../../../src/items/space.js';

let base: string;
let keyDir: string;
let spaces: Space[];
let project: Space;
let user: Space;
let system: Space;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'dirigent-key-ring-'));
  keyDir = join(base, 'keys');
  spaces = (['project', 'user', 'system'] as const).map((name) => ({
    name,
    root: join(base, name, '.ai'),
  }));
  [project, user, system] = spaces as [Space, Space, Space];
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function mode(file: string): number {
  return statSync(file).mode & 0o777;
}

async function refusal(promise: Promise<unknown>): Promise<DirigentError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DirigentError);
  return err as DirigentError;
}

function put(file: string, text: string): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

describe('signingKeyDir', () => {
  it('is $DIRIGENT_SIGNING_KEY_DIR, else keys/ in the user space', () => {
    expect(signingKeyDir('/p', { DIRIGENT_SIGNING_KEY_DIR: '/k', DIRIGENT_USER_SPACE: '/u' })).toBe(
      '/k',
    );
    expect(signingKeyDir('/p', { DIRIGENT_USER_SPACE: '/u' })).toBe(join('/u', 'keys'));
    expect(signingKeyDir('/p', {})).toBe(join(homedir(), '.ai', 'keys'));
  });
});

describe('initSigningKey and readSigningKey', () => {
  it('makes a private key only its owner can read, and trusts the key in the given space', async () => {
    const made = await initSigningKey(keyDir, { owner: 'ada', trustIn: user.root });
    expect(made.privateKeyFile).toBe(join(keyDir, 'private_key.pem'));
    expect(made.publicKeyFile).toBe(join(keyDir, 'public_key.pem'));
    expect(mode(keyDir)).toBe(0o700);
    expect(mode(made.privateKeyFile)).toBe(0o600);
    expect(mode(made.publicKeyFile)).toBe(0o644);

    const publicPem = readFileSync(made.publicKeyFile, 'utf8');
    expect(made.keyId).toBe(keyFingerprint(publicPem));
    expect(made.fingerprint).toBe(ryeosKeyFingerprint(createPublicKey(publicPem)));
    expect(made.trustedKeyFile).toBe(join(user.root, 'trusted_keys', `${made.keyId}.toml`));

    const read = await readSigningKey(keyDir);
    expect(read).toMatchObject({ keyId: made.keyId, publicKeyPem: publicPem });
    const trusted = await new TrustStore(spaces).get(made.keyId);
    expect(trusted).toMatchObject({ owner: 'ada', space: 'user', keyId: made.keyId });
    // RYE's current lines name the 64-hex fingerprint; the same file serves them.
    await expect(new TrustStore(spaces).get(made.fingerprint)).resolves.toMatchObject({
      owner: 'ada',
    });
  });

  it('keeps an existing key unless forced', async () => {
    const first = await initSigningKey(keyDir, { owner: 'ada', trustIn: user.root });
    const err = await refusal(initSigningKey(keyDir, { owner: 'ada', trustIn: user.root }));
    expect(err.code).toBe(ErrorCode.ITEM_EXISTS);
    expect(err.message).toContain(first.keyId);
    expect(err.hint).toContain('--force');
    expect((await readSigningKey(keyDir)).keyId).toBe(first.keyId);

    const second = await initSigningKey(keyDir, { owner: 'ada', trustIn: user.root, force: true });
    expect(second.keyId).not.toBe(first.keyId);
    expect((await readSigningKey(keyDir)).keyId).toBe(second.keyId);
    expect(mode(second.privateKeyFile)).toBe(0o600);
  });

  it('says how to make a key when there is none', async () => {
    const err = await refusal(readSigningKey(keyDir));
    expect(err.code).toBe(ErrorCode.NO_SIGNING_KEY);
    expect(err.message).toBe(`No signing key in ${keyDir}.`);
    expect(err.hint).toContain('dirigent keys init');
  });

  it.each(['0644', '0640', '0604', '0660'])(
    'refuses a private key of mode %s, with a chmod 600 hint',
    async (octal) => {
      const readable = parseInt(octal, 8);
      const made = await initSigningKey(keyDir, { owner: 'ada', trustIn: user.root });
      chmodSync(made.privateKeyFile, readable);
      const err = await refusal(readSigningKey(keyDir));
      expect(err.code).toBe(ErrorCode.NO_SIGNING_KEY);
      expect(err.message).toContain('is accessible by other users');
      expect(err.message).toContain(`(mode ${octal})`);
      expect(err.hint).toBe(`Make it yours alone: chmod 600 ${made.privateKeyFile}`);
      chmodSync(made.privateKeyFile, 0o600);
      await expect(readSigningKey(keyDir)).resolves.toMatchObject({ keyId: made.keyId });
    },
  );

  it('refuses a public key that is missing or belongs to another private key', async () => {
    await initSigningKey(keyDir, { owner: 'ada', trustIn: user.root });
    const publicFile = join(keyDir, 'public_key.pem');
    rmSync(publicFile);
    expect((await refusal(readSigningKey(keyDir))).code).toBe(ErrorCode.NO_SIGNING_KEY);

    writeFileSync(publicFile, generateSigningKey().publicKeyPem);
    const err = await refusal(readSigningKey(keyDir));
    expect(err.code).toBe(ErrorCode.BAD_SIGNATURE);
    expect(err.message).toContain('are not one key pair');
  });
});

/** RYE's identity format (`trusted_keys/<fp>.toml`, `config/keys/trusted/<fp>.toml`). */
function identityToml(pem: string, owner: string, fingerprint?: string): string {
  return (
    'version = "1.0.0"\n' +
    (fingerprint === undefined ? '' : `fingerprint = "${fingerprint}"\n`) +
    `owner = "${owner}"\nattestation = ""\n\n[public_key]\npem = """\n${pem}"""\n`
  );
}

describe('trustKey', () => {
  it('trusts a PEM under its fingerprint, for both signature line formats', async () => {
    const key = generateSigningKey();
    const written = await trustKey(project.root, key.publicKeyPem, 'bob');
    expect(written).toEqual({
      keyId: key.keyId,
      fingerprint: ryeosKeyFingerprint(createPublicKey(key.publicKeyPem)),
      owner: 'bob',
      file: join(project.root, 'trusted_keys', `${key.keyId}.toml`),
    });
    const store = new TrustStore(spaces);
    await expect(store.get(key.keyId)).resolves.toMatchObject({ owner: 'bob', space: 'project' });
    await expect(store.get(written.fingerprint)).resolves.toMatchObject({ owner: 'bob' });
  });

  it("trusts RYE's TOML: the identity format, and the publisher format (ed25519:…)", async () => {
    const key = generateSigningKey();
    const fingerprint = ryeosKeyFingerprint(createPublicKey(key.publicKeyPem));
    const identity = await trustKey(
      user.root,
      identityToml(key.publicKeyPem, 'carol', fingerprint),
    );
    expect(identity).toMatchObject({ keyId: key.keyId, fingerprint, owner: 'carol' });

    const raw = createPublicKey(key.publicKeyPem).export({ type: 'spki', format: 'der' });
    const publisher =
      `public_key = "ed25519:${raw.subarray(raw.length - 32).toString('base64')}"\n` +
      `fingerprint = "${fingerprint}"\nowner = "ryeos-dev"\n`;
    const again = await trustKey(project.root, publisher);
    expect(again).toMatchObject({ keyId: key.keyId, fingerprint, owner: 'ryeos-dev' });
    // The owner given on the command line wins over the document's.
    expect((await trustKey(project.root, publisher, 'dave')).owner).toBe('dave');
  });

  it('defaults the owner of a bare PEM to unknown, and accepts CRLF and no final newline', async () => {
    const key = generateSigningKey();
    const crlf = key.publicKeyPem.trimEnd().replace(/\n/g, '\r\n');
    const written = await trustKey(user.root, crlf);
    expect(written).toMatchObject({ keyId: key.keyId, owner: 'unknown' });
  });

  it('refuses a private key, a document whose fingerprint is not its key, and garbage', async () => {
    const key = generateSigningKey();
    const privateKey = await refusal(trustKey(user.root, key.privateKeyPem));
    expect(privateKey.code).toBe(ErrorCode.BAD_SIGNATURE);
    expect(privateKey.message).toBe('This is a private key.');

    const lying = identityToml(key.publicKeyPem, 'eve', generateSigningKey().keyId);
    const mismatch = await refusal(trustKey(user.root, lying));
    expect(mismatch.code).toBe(ErrorCode.BAD_SIGNATURE);
    expect(mismatch.message).toMatch(/^Not a trusted-key document: it says fingerprint = /);

    expect((await refusal(trustKey(user.root, 'hello'))).code).toBe(ErrorCode.BAD_SIGNATURE);
    expect(existsSync(join(user.root, 'trusted_keys'))).toBe(false);
  });
});

describe('listTrustedKeys', () => {
  it('lists every space in lookup order, with the files the trust store skips', async () => {
    const a = generateSigningKey();
    const b = generateSigningKey();
    await trustKey(project.root, a.publicKeyPem, 'ada');
    await trustKey(user.root, b.publicKeyPem, 'bob');
    const bFingerprint = ryeosKeyFingerprint(createPublicKey(b.publicKeyPem));
    put(
      join(system.root, 'config', 'keys', 'trusted', `${bFingerprint}.toml`),
      identityToml(b.publicKeyPem, 'ci'),
    );
    const liar = put(
      join(user.root, 'trusted_keys', `${a.keyId}.toml`),
      identityToml(b.publicKeyPem, 'mallory'),
    );

    const listing = await listTrustedKeys(spaces);
    // Space by space; within a folder, by file name.
    const userRows = [
      ['user', 'skipped', a.keyId, ''],
      ['user', 'trusted', b.keyId, 'bob'],
    ].sort((x, y) => x[2]!.localeCompare(y[2]!));
    expect(listing.map((k) => [k.space, k.status, k.keyId, k.owner])).toEqual([
      ['project', 'trusted', a.keyId, 'ada'],
      ...userRows,
      ['system', 'trusted', bFingerprint, 'ci'],
    ]);
    expect(listing.find((k) => k.status === 'skipped')).toMatchObject({
      file: liar,
      reason: `holds key ${b.keyId}, not ${a.keyId} (its name)`,
    });
    expect(listing.find((k) => k.owner === 'bob')!.fingerprints).toEqual({
      rye: b.keyId,
      ryeos: bFingerprint,
    });
  });

  it('lists nothing when no space trusts a key', async () => {
    expect(await listTrustedKeys(spaces)).toEqual([]);
  });
});

// Two real Ed25519 public keys whose fingerprints share the prefix 65c493ff: A's `rye`
// fingerprint is 65c493ff20549d32, B's `ryeos` fingerprint starts 65c493ff234f98af.
const SHARED_A =
  '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAaEohCMeo7W3pc5FVnCcmc5Ud27ucyWz8jejFdxxAiiY=\n-----END PUBLIC KEY-----\n';
const SHARED_B =
  '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAvOUB97tj0GQumRAPgOtekWhqHBBYzrhccDk++ZcNxkk=\n-----END PUBLIC KEY-----\n';

describe('revokeKey', () => {
  it('removes the key from the project and user spaces by an 8-character prefix', async () => {
    const key = generateSigningKey();
    const keep = generateSigningKey();
    const inProject = await trustKey(project.root, key.publicKeyPem, 'ada');
    const inUser = await trustKey(user.root, key.publicKeyPem, 'ada');
    const kept = await trustKey(user.root, keep.publicKeyPem, 'bob');

    const revoked = await revokeKey(spaces, key.keyId.slice(0, 8).toUpperCase());
    expect(revoked.removed.sort()).toEqual([inProject.file, inUser.file].sort());
    expect(revoked.remaining).toEqual([]);
    expect(revoked.fingerprints).toEqual({ rye: key.keyId, ryeos: inUser.fingerprint });
    expect(existsSync(inProject.file) || existsSync(inUser.file)).toBe(false);
    expect(existsSync(kept.file)).toBe(true);
    await expect(new TrustStore(spaces).get(key.keyId)).resolves.toBeUndefined();
  });

  it('finds the key by its 64-hex fingerprint and in config/keys/trusted/', async () => {
    const key = generateSigningKey();
    const fingerprint = ryeosKeyFingerprint(createPublicKey(key.publicKeyPem));
    const file = put(
      join(user.root, 'config', 'keys', 'trusted', `${fingerprint}.toml`),
      identityToml(key.publicKeyPem, 'ci', fingerprint),
    );
    const revoked = await revokeKey(spaces, fingerprint);
    expect(revoked.removed).toEqual([file]);
  });

  it('removes only from the space given', async () => {
    const key = generateSigningKey();
    const inProject = await trustKey(project.root, key.publicKeyPem);
    const inUser = await trustKey(user.root, key.publicKeyPem);
    await revokeKey(user.root, key.keyId);
    expect(existsSync(inUser.file)).toBe(false);
    expect(existsSync(inProject.file)).toBe(true);
  });

  it('leaves the system space alone, and says so', async () => {
    const key = generateSigningKey();
    const inUser = await trustKey(user.root, key.publicKeyPem);
    const inSystem = await writeTrustedKey(system.root, key.publicKeyPem, 'dirigent');
    const revoked = await revokeKey(spaces, key.keyId);
    expect(revoked.removed).toEqual([inUser.file]);
    expect(revoked.remaining).toEqual([{ space: 'system', file: inSystem.file }]);

    const err = await refusal(revokeKey(spaces, key.keyId));
    expect(err.code).toBe(ErrorCode.SPACE_READ_ONLY);
    expect(existsSync(inSystem.file)).toBe(true);
  });

  it('refuses a prefix shorter than 8 characters, or not hex', async () => {
    const key = generateSigningKey();
    await trustKey(user.root, key.publicKeyPem);
    for (const id of [key.keyId.slice(0, 7), 'zzzzzzzz', '']) {
      const err = await refusal(revokeKey(spaces, id));
      expect(err.code).toBe(ErrorCode.INVALID_REQUEST);
      expect(err.message).toBe(`"${id}" is not a key fingerprint.`);
    }
  });

  it('refuses a key no space trusts', async () => {
    const err = await refusal(revokeKey(spaces, generateSigningKey().keyId));
    expect(err.code).toBe(ErrorCode.UNTRUSTED_KEY);
    expect(err.hint).toContain('dirigent keys list');
  });

  // Regression: the hint listed each key's 64-hex fingerprint, which for a key matched by its
  // 16-hex one did not start with the prefix given.
  it('refuses a prefix two keys share, and names the fingerprint of each that it matched', async () => {
    const a = await trustKey(user.root, SHARED_A, 'ada');
    const b = await trustKey(user.root, SHARED_B, 'bob');
    expect(a.keyId).toBe('65c493ff20549d32');
    expect(b.fingerprint.startsWith('65c493ff234f98af')).toBe(true);

    const err = await refusal(revokeKey(spaces, '65c493ff'));
    expect(err.code).toBe(ErrorCode.INVALID_REQUEST);
    expect(err.message).toBe('"65c493ff" names 2 keys.');
    expect(err.hint).toBe('Give more of the fingerprint: 65c493ff20549d32 or 65c493ff234f98af.');
    expect(existsSync(a.file) && existsSync(b.file)).toBe(true);

    expect((await revokeKey(spaces, '65c493ff23')).removed).toEqual([b.file]);
    expect(existsSync(a.file)).toBe(true);
  });
});

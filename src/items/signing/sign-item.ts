/**
 * Signing items the way RYE's `sign` does (reference §5.6 step 6), and the keys to do it with.
 * The signatures verify in RYE and in Dirigent alike (RYE's schemes: see `content-hash.ts`).
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  type KeyObject,
} from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ItemKind } from '../item-kind.js';
import { normalizeLineEndings, sha256Hex, signedContentHash } from './content-hash.js';
import {
  formatRyeosSignatureLine,
  formatSignatureLine,
  insertSignatureLine,
  removeSignatureLine,
  signatureSlot,
  signatureStyleFor,
} from './signature-line.js';
import { keyFingerprint, ryeosKeyFingerprint } from './trust-store.js';
import { keyNotEd25519, keyNotReadable, keysNotAPair } from '../../errors/signing-errors.js';

/** An Ed25519 key pair as PEM texts. */
export interface SigningKey {
  /** PKCS#8 PEM of the private key. */
  privateKeyPem: string;
  /** SubjectPublicKeyInfo PEM of the public key; its exact text gives the fingerprint. */
  publicKeyPem: string;
}

/** A new key pair and its fingerprint. */
export interface GeneratedSigningKey extends SigningKey {
  /** The fingerprint (16 lowercase hex characters) that signature lines name. */
  keyId: string;
}

/** What {@link signItem} wrote. */
export interface SignResult {
  file: string;
  /** The signature line, without line ending. */
  line: string;
  /** The signed content hash. */
  hash: string;
  keyId: string;
  /** `YYYY-MM-DDTHH:MM:SSZ`. */
  timestamp: string;
  /** Whether the signature covers all the item's content (see `SignedContent`). */
  coversWholeFile: boolean;
  /**
   * The line written: `rye` (`rye:signed`; {@link keyId} is the 16-hex fingerprint) or `ryeos`
   * (`ryeos:signed`, see {@link SignOptions.wholeFile}; {@link keyId} is the 64-hex one).
   */
  format: 'rye' | 'ryeos';
  /** What the signer should know, such as process steps the signature leaves out. */
  warnings: string[];
}

/** Options of {@link signItem}. */
export interface SignOptions {
  /** The signing time. Default: now. */
  now?: Date;
  /**
   * Make the signature cover the whole item. A `rye:signed` hash leaves out a directive's text
   * after the XML fence (RYE's modern layout puts the `<process>` steps there) and a knowledge
   * entry's `---` front matter, which could then change unnoticed. With this set, such an item
   * gets a `ryeos:signed` line instead: RYE's current format, whose hash covers every byte after
   * the line, which Dirigent and RYE both verify. Other items get a `rye:signed` line either way.
   * Default: `false`.
   */
  wholeFile?: boolean;
}

/**
 * Signs an item in place: removes an old signature or placeholder line, hashes the content
 * (reference §5.2), signs the 64-character hex hash with Ed25519, and inserts the line (line 1,
 * or after a `#!/` shebang where the file type allows it). A file with CRLF line endings keeps
 * them. It does not validate the item: parse it first. The line is `rye:signed`, or
 * `ryeos:signed` for an item that only it covers whole when {@link SignOptions.wholeFile} is set.
 *
 * @throws DirigentError `BAD_SIGNATURE` when the key is not an Ed25519 pair.
 */
export async function signItem(
  file: string,
  kind: ItemKind,
  key: SigningKey,
  options: SignOptions = {},
): Promise<SignResult> {
  const { privateKey, keyId } = signingKeyOf(key);
  const original = await readFile(file, 'utf8');
  const crlf = original.includes('\r\n');
  const style = signatureStyleFor(file);
  const clean = removeSignatureLine(normalizeLineEndings(original), style);
  // Hash exactly what verification will see: the final text with (any) signature line in place.
  const draft = formatSignatureLine(
    { timestamp: '1970-01-01T00:00:00Z', hash: '0'.repeat(64), signature: 'AA==', keyId },
    style,
  );
  const drafted = insertSignatureLine(clean, draft, style);
  const content = signedContentHash(drafted, kind, file);
  const timestamp = (options.now ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const asWritten = (text: string) => (crlf ? text.replace(/\n/g, '\r\n') : text);

  let line: string;
  let result: Pick<SignResult, 'hash' | 'keyId' | 'coversWholeFile' | 'format' | 'warnings'>;
  if (options.wholeFile === true && !content.coversWholeFile) {
    // RYE hashes the bytes after the line as they are on disk: CRLF ones for a CRLF file.
    const written = asWritten(drafted);
    const hash = sha256Hex(written.slice(signatureSlot(written, style).end));
    const fingerprint = ryeosKeyFingerprint(createPublicKey(key.publicKeyPem));
    const signature = sign(null, Buffer.from(hash, 'utf8'), privateKey).toString('base64');
    line = formatRyeosSignatureLine({ timestamp, hash, signature, keyId: fingerprint }, style);
    result = { hash, keyId: fingerprint, coversWholeFile: true, format: 'ryeos', warnings: [] };
  } else {
    const signature = sign(null, Buffer.from(content.hash, 'utf8'), privateKey);
    line = formatSignatureLine(
      { timestamp, hash: content.hash, signature: toBase64UrlPadded(signature), keyId },
      style,
    );
    const warnings = content.coversWholeFile
      ? []
      : [`The signature of ${file} does not cover ${content.uncovered}.`];
    result = {
      hash: content.hash,
      keyId,
      coversWholeFile: content.coversWholeFile,
      format: 'rye',
      warnings,
    };
  }
  await writeFile(file, asWritten(insertSignatureLine(clean, line, style)), 'utf8');
  return { file, line, timestamp, ...result };
}

/** A new Ed25519 key pair (PKCS#8 and SPKI PEM, as RYE stores them) and its fingerprint. */
export function generateSigningKey(): GeneratedSigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519', {
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey, keyId: keyFingerprint(publicKey) };
}

/**
 * Trusts a public key in a space: writes `<spaceRoot>/trusted_keys/<fp>.toml` in RYE A's format
 * (`fingerprint`, `owner`, `attestation`, `[public_key] pem`). A PEM without a final newline gets
 * one, as RYE's fingerprints include it.
 *
 * @param spaceRoot the space's `.ai/` folder.
 * @returns the file written and the key's fingerprint.
 * @throws DirigentError `BAD_SIGNATURE` when the PEM is not an Ed25519 public key.
 */
export async function writeTrustedKey(
  spaceRoot: string,
  publicKeyPem: string,
  owner: string,
): Promise<{ file: string; keyId: string }> {
  const pem = publicKeyPem.endsWith('\n') ? publicKeyPem : `${publicKeyPem}\n`;
  ed25519(() => createPublicKey(pem), 'public');
  const keyId = keyFingerprint(pem);
  const dir = join(spaceRoot, 'trusted_keys');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${keyId}.toml`);
  // JSON string escapes are valid TOML basic-string escapes; PEM text needs none.
  const toml =
    `fingerprint = "${keyId}"\n` +
    `owner = ${JSON.stringify(owner)}\n` +
    'attestation = ""\n\n' +
    '[public_key]\n' +
    `pem = """\n${pem}"""\n`;
  await writeFile(file, toml, { encoding: 'utf8', mode: 0o644 });
  return { file, keyId };
}

function signingKeyOf(key: SigningKey): { privateKey: KeyObject; keyId: string } {
  const privateKey = ed25519(() => createPrivateKey(key.privateKeyPem), 'private');
  const publicKey = ed25519(() => createPublicKey(key.publicKeyPem), 'public');
  const derived = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  if (!derived.equals(publicKey.export({ type: 'spki', format: 'der' }))) {
    throw keysNotAPair({ pem: 'private' }, { pem: 'public' }, keyFingerprint(key.publicKeyPem));
  }
  return { privateKey, keyId: keyFingerprint(key.publicKeyPem) };
}

function ed25519(read: () => KeyObject, which: 'private' | 'public'): KeyObject {
  let key: KeyObject;
  try {
    key = read();
  } catch (err) {
    throw keyNotReadable({ pem: which }, err);
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw keyNotEd25519({ pem: which }, key.asymmetricKeyType);
  }
  return key;
}

/** Base64url with `=` padding, as RYE writes signatures (88 characters for Ed25519). */
function toBase64UrlPadded(bytes: Buffer): string {
  const text = bytes.toString('base64url');
  return text + '='.repeat((4 - (text.length % 4)) % 4);
}

/**
 * The keys whose signatures Dirigent accepts (reference §5.4): identity TOML files in each space,
 * looked up by the fingerprint a signature line names.
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type * as SmolToml from 'smol-toml';
import { lazyPackage } from '../../lazy-package.js';
import type { Space, SpaceName } from '../space.js';

/** The TOML reader, loaded by the first key file read (a run with no key to check loads none). */
const smolToml = lazyPackage<typeof SmolToml>('smol-toml');

/** A key found in the trust store. */
export interface TrustedKey {
  /** The fingerprint it was looked up by: 16 (`rye:signed`) or 64 (`ryeos:signed`) hex characters. */
  keyId: string;
  /** Who the key belongs to (`owner` of the TOML file; `''` when absent). */
  owner: string;
  /** The public key as stored (SubjectPublicKeyInfo PEM; rebuilt from an `ed25519:` value). */
  publicKeyPem: string;
  /** The Ed25519 public key, ready for `crypto.verify`. */
  publicKey: KeyObject;
  /** The TOML file it came from. */
  file: string;
  /** The space of that file. */
  space: SpaceName;
  /** Both fingerprints of the key: `rye` (16 hex, of the PEM text) and `ryeos` (64 hex). */
  fingerprints: KeyFingerprints;
}

/** A key's two fingerprints, one per signature line format. */
export interface KeyFingerprints {
  /** `rye:signed` lines: the first 16 hex characters of SHA-256 of the public key PEM text. */
  rye: string;
  /** `ryeos:signed` lines: SHA-256 of the raw 32-byte Ed25519 public key, 64 hex characters. */
  ryeos: string;
}

/** A key file that was found under the right name but ignored, and why. */
export interface SkippedKeyFile {
  file: string;
  reason: string;
}

/** The result of {@link TrustStore.lookup}. */
export interface KeyLookup {
  /** The first valid key file for the fingerprint, if any. */
  key: TrustedKey | undefined;
  /** Key files with the fingerprint's name that were ignored before (or instead of) a match. */
  skipped: SkippedKeyFile[];
}

/** A key file read on its own, whatever its name (see {@link readTrustedKeyFile}). */
export interface KeyFile {
  file: string;
  owner: string;
  publicKeyPem: string;
  publicKey: KeyObject;
  fingerprints: KeyFingerprints;
}

/**
 * A key's fingerprint as RYE computes it for `rye:signed` lines: the first 16 hex characters of
 * SHA-256 of the public key PEM text, header, footer and trailing newline included.
 */
export function keyFingerprint(publicKeyPem: string): string {
  return createHash('sha256').update(publicKeyPem, 'utf8').digest('hex').slice(0, 16);
}

/**
 * A key's fingerprint as RYE's current tooling computes it for `ryeos:signed` lines: SHA-256 of
 * the raw 32-byte Ed25519 public key, 64 hex characters.
 */
export function ryeosKeyFingerprint(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  // An Ed25519 SubjectPublicKeyInfo is a fixed 12-byte header followed by the 32 key bytes.
  return createHash('sha256')
    .update(der.subarray(der.length - 32))
    .digest('hex');
}

/**
 * Reads an Ed25519 public key written as RYE writes them: a SubjectPublicKeyInfo PEM,
 * `ed25519:<base64>` (RYE's current key documents), or the bare base64 of the 32 key bytes.
 * Returns the key and its PEM text (as given, with a final newline, or rebuilt in the standard
 * form for the other notations).
 *
 * @throws Error with a sentence saying what is wrong.
 */
export function readPublicKey(text: string): { publicKey: KeyObject; pem: string } {
  const trimmed = text.trim();
  let publicKey: KeyObject;
  let pem: string | undefined;
  if (trimmed.includes('-----BEGIN')) {
    pem = text.endsWith('\n') ? text : `${text}\n`;
    try {
      publicKey = createPublicKey(pem);
    } catch (err) {
      throw new Error(`holds no readable public key: ${(err as Error).message}`);
    }
  } else {
    const b64 = trimmed.replace(/^ed25519:/, '').trim();
    const bytes = Buffer.from(b64, 'base64');
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(b64) || bytes.length !== 32) {
      throw new Error('holds no public key (a PEM, or ed25519:<base64> of 32 bytes)');
    }
    publicKey = createPublicKey({
      key: Buffer.concat([ED25519_SPKI_HEADER, bytes]),
      format: 'der',
      type: 'spki',
    });
  }
  if (publicKey.asymmetricKeyType !== 'ed25519') {
    throw new Error(`holds a ${publicKey.asymmetricKeyType ?? 'unknown'} key, not Ed25519`);
  }
  pem ??= publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return { publicKey, pem };
}

/** The DER header of an Ed25519 SubjectPublicKeyInfo (RFC 8410), before the 32 key bytes. */
const ED25519_SPKI_HEADER = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * Where a space keeps trusted keys, in lookup order, relative to the space's `.ai/` folder:
 * RYE A's `trusted_keys/` and `config/keys/trusted/`, where RYE B and RYE's current tooling keep
 * them (`ryeos trust pin` writes `<64-hex fingerprint>.toml` there).
 */
export const TRUSTED_KEY_DIRS: readonly string[] = [
  'trusted_keys',
  join('config', 'keys', 'trusted'),
];

const KEY_ID = /^(?:[a-f0-9]{16}|[a-f0-9]{64})$/;

/**
 * Looks up trusted Ed25519 keys by fingerprint in `<space>/trusted_keys/` (RYE A) and
 * `<space>/config/keys/trusted/` (RYE B and RYE's current tooling), through the spaces in the
 * order given (project, user, system): the first valid file wins.
 *
 * Both signature line formats are served. A 16-hex fingerprint (`rye:signed`) is that of the
 * stored PEM text; a 64-hex one (`ryeos:signed`) is SHA-256 of the raw key. In each folder the
 * file named `<fingerprint>.toml` is tried first; failing that, every other `.toml` file of the
 * folder is read and the one holding a key with that fingerprint is used (RYE's current tooling
 * reads every file of the folder), so one key file serves both formats. The fields are
 * `fingerprint`, `owner`, `[public_key] pem` (a PEM, or `ed25519:<base64>`); others (`version`,
 * `attestation`) are ignored. RYE's raw `.pub`/`.key` files are not read.
 *
 * A file is skipped when it does not parse, holds no key, holds a key that is not Ed25519, or when
 * its name or its `fingerprint` field is a fingerprint of another key: a key cannot be trusted
 * under another key's name.
 *
 * Files are read on each lookup, so keys added while Dirigent runs count at once. Key files that
 * are themselves signed (RYE B, RYE's current tooling) are trusted for their place, not for that
 * signature, which is not checked here.
 */
export class TrustStore {
  constructor(private readonly spaces: readonly Space[]) {}

  /** The trusted key with this fingerprint, or `undefined`. */
  async get(keyId: string): Promise<TrustedKey | undefined> {
    return (await this.lookup(keyId)).key;
  }

  /** The trusted key with this fingerprint, and the files with its name that were ignored. */
  async lookup(keyId: string): Promise<KeyLookup> {
    const skipped: SkippedKeyFile[] = [];
    if (!KEY_ID.test(keyId)) return { key: undefined, skipped };
    for (const space of this.spaces) {
      for (const dir of TRUSTED_KEY_DIRS) {
        const named = join(space.root, dir, `${keyId}.toml`);
        const read = await readTrustedKeyFile(named);
        // A valid file named after the fingerprint holds that key (readTrustedKeyFile checks).
        if (read !== undefined && 'reason' in read) skipped.push(read);
        else if (read !== undefined) return { key: trusted(read, keyId, space.name), skipped };
        for (const file of await keyFilesIn(join(space.root, dir))) {
          if (file === named) continue;
          const other = await readTrustedKeyFile(file);
          if (other !== undefined && !('reason' in other) && matches(other, keyId)) {
            return { key: trusted(other, keyId, space.name), skipped };
          }
        }
      }
    }
    return { key: undefined, skipped };
  }
}

/** The `.toml` files directly in `dir`, sorted; none when it does not exist. */
export async function keyFilesIn(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries
      .filter((e) => e.isFile() && e.name.endsWith('.toml'))
      .map((e) => join(dir, e.name))
      .sort();
  } catch {
    return [];
  }
}

function matches(key: KeyFile, keyId: string): boolean {
  return keyId.length === 16 ? key.fingerprints.rye === keyId : key.fingerprints.ryeos === keyId;
}

function trusted(key: KeyFile, keyId: string, space: SpaceName): TrustedKey {
  return { ...key, keyId, space };
}

/**
 * Reads one trusted-key TOML file: `undefined` when it does not exist, a {@link SkippedKeyFile}
 * when it cannot be used (see {@link TrustStore}), else the key with both its fingerprints. A file
 * named after a fingerprint (`<16 or 64 hex>.toml`) must hold that key.
 */
export async function readTrustedKeyFile(
  file: string,
): Promise<KeyFile | SkippedKeyFile | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { file, reason: `cannot be read: ${(err as Error).message}` };
  }
  const read = readTrustedKeyText(text);
  if ('reason' in read) return { file, reason: read.reason };
  const stem = basename(file, '.toml');
  const { rye, ryeos } = read.fingerprints;
  if (KEY_ID.test(stem) && stem !== rye && stem !== ryeos) {
    return {
      file,
      reason: `holds key ${stem.length === 16 ? rye : ryeos}, not ${stem} (its name)`,
    };
  }
  return { file, ...read };
}

/**
 * Reads the text of a trusted-key TOML document (RYE's identity format: `fingerprint`, `owner`,
 * `[public_key] pem`; or RYE's publisher format: `public_key = "ed25519:…"`, `fingerprint`,
 * `owner`). A `fingerprint` field must be one of the key's fingerprints.
 */
export function readTrustedKeyText(text: string): Omit<KeyFile, 'file'> | { reason: string } {
  let data: Record<string, unknown>;
  try {
    data = smolToml().parse(text) as Record<string, unknown>;
  } catch (err) {
    return { reason: `is not valid TOML: ${(err as Error).message.split('\n')[0]}` };
  }
  const table = data.public_key;
  const pemField =
    typeof table === 'object' && table !== null
      ? (table as Record<string, unknown>).pem
      : typeof table === 'string'
        ? table
        : undefined;
  if (typeof pemField !== 'string') return { reason: 'has no [public_key] pem' };
  let key: { publicKey: KeyObject; pem: string };
  try {
    key = readPublicKey(pemField);
  } catch (err) {
    return { reason: (err as Error).message };
  }
  const fingerprints = { rye: keyFingerprint(key.pem), ryeos: ryeosKeyFingerprint(key.publicKey) };
  const declared = data.fingerprint;
  if (declared !== undefined && declared !== fingerprints.rye && declared !== fingerprints.ryeos) {
    const actual = String(declared).length === 64 ? fingerprints.ryeos : fingerprints.rye;
    return { reason: `says fingerprint = "${String(declared)}", but its key's is ${actual}` };
  }
  const owner = typeof data.owner === 'string' ? data.owner : '';
  return { owner, publicKeyPem: key.pem, publicKey: key.publicKey, fingerprints };
}

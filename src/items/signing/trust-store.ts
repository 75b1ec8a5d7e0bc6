/**
 * The keys whose signatures Dirigent accepts (reference §5.4): identity TOML files named after
 * the key's fingerprint, looked up space by space.
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { Space, SpaceName } from '../space.js';

/** A key found in the trust store. */
export interface TrustedKey {
  /** The fingerprint: 16 lowercase hex characters. */
  keyId: string;
  /** Who the key belongs to (`owner` of the TOML file; `''` when absent). */
  owner: string;
  /** The public key as stored (SubjectPublicKeyInfo PEM). */
  publicKeyPem: string;
  /** The Ed25519 public key, ready for `crypto.verify`. */
  publicKey: KeyObject;
  /** The TOML file it came from. */
  file: string;
  /** The space of that file. */
  space: SpaceName;
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

/**
 * A key's fingerprint as RYE computes it: the first 16 hex characters of SHA-256 of the public
 * key PEM text, header, footer and trailing newline included.
 */
export function keyFingerprint(publicKeyPem: string): string {
  return createHash('sha256').update(publicKeyPem, 'utf8').digest('hex').slice(0, 16);
}

/**
 * Where a space keeps trusted keys, in lookup order: RYE A's `trusted_keys/` and RYE B's
 * `config/keys/trusted/`, both relative to the space's `.ai/` folder.
 */
export const TRUSTED_KEY_DIRS: readonly string[] = [
  'trusted_keys',
  join('config', 'keys', 'trusted'),
];

const KEY_ID = /^[a-f0-9]{16}$/;

/**
 * Looks up trusted Ed25519 keys by fingerprint in `<space>/trusted_keys/<fp>.toml` (RYE A:
 * `fingerprint`, `owner`, `[public_key] pem`) and `<space>/config/keys/trusted/<fp>.toml` (RYE B,
 * same fields), through the spaces in the order given (project, user, system): the first valid
 * file wins. A file is skipped when it does not parse, holds no PEM, holds a key that is not
 * Ed25519, or when the key's recomputed fingerprint differs from the file's name (or from its
 * `fingerprint` field): a key cannot be trusted under another key's name.
 *
 * Files are read on each lookup, so keys added while Dirigent runs count at once. B's key files
 * are themselves signed; that signature is not checked here.
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
        const file = join(space.root, dir, `${keyId}.toml`);
        const read = await readKeyFile(file, keyId, space.name);
        if (read === undefined) continue;
        if ('reason' in read) skipped.push(read);
        else return { key: read, skipped };
      }
    }
    return { key: undefined, skipped };
  }
}

async function readKeyFile(
  file: string,
  keyId: string,
  space: SpaceName,
): Promise<TrustedKey | SkippedKeyFile | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { file, reason: `cannot be read: ${(err as Error).message}` };
  }
  let data: Record<string, unknown>;
  try {
    data = parseToml(text) as Record<string, unknown>;
  } catch (err) {
    return { file, reason: `is not valid TOML: ${(err as Error).message.split('\n')[0]}` };
  }
  const table = data.public_key as Record<string, unknown> | undefined;
  const pem = typeof table === 'object' && table !== null ? table.pem : undefined;
  if (typeof pem !== 'string') return { file, reason: 'has no [public_key] pem' };
  const actual = keyFingerprint(pem);
  if (actual !== keyId) {
    return { file, reason: `holds key ${actual}, not ${keyId} (its name)` };
  }
  if (data.fingerprint !== undefined && data.fingerprint !== keyId) {
    return { file, reason: `says fingerprint = "${String(data.fingerprint)}", not ${keyId}` };
  }
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey(pem);
  } catch (err) {
    return { file, reason: `holds no readable public key: ${(err as Error).message}` };
  }
  if (publicKey.asymmetricKeyType !== 'ed25519') {
    return { file, reason: `holds a ${publicKey.asymmetricKeyType ?? 'unknown'} key, not Ed25519` };
  }
  const owner = typeof data.owner === 'string' ? data.owner : '';
  return { keyId, owner, publicKeyPem: pem, publicKey, file, space };
}

/**
 * `dirigent keys trust`: trusting a public key in a space.
 */
import type { KeyObject } from 'node:crypto';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { writeTrustedKey } from './sign-item.js';
import { readPublicKey, readTrustedKeyText, ryeosKeyFingerprint } from './trust-store.js';

/** What {@link trustKey} wrote. */
export interface TrustedKeyWritten {
  /** The fingerprint `rye:signed` lines name (16 hex characters), and the file's name. */
  keyId: string;
  /** The fingerprint `ryeos:signed` lines name (64 hex characters). */
  fingerprint: string;
  owner: string;
  file: string;
}

/**
 * Trusts a public key in a space: writes `<spaceRoot>/trusted_keys/<keyId>.toml`, which serves
 * both signature line formats.
 *
 * @param spaceRoot the space's `.ai/` folder.
 * @param text a public key PEM, `ed25519:<base64>`, or a RYE trusted-key TOML document (its
 *   `[public_key] pem`, or `public_key = "ed25519:…"`, and its `owner`).
 * @param owner who the key belongs to (default: the document's `owner`, else `unknown`).
 * @throws DirigentError `BAD_SIGNATURE` when `text` holds no Ed25519 public key (or holds a
 *   private key), or when a document's `fingerprint` is not its key's.
 */
export async function trustKey(
  spaceRoot: string,
  text: string,
  owner?: string,
): Promise<TrustedKeyWritten> {
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    throw DirigentError.fatal(ErrorCode.BAD_SIGNATURE, 'This is a private key.', {
      hint: 'Trust the public key (public_key.pem); a private key never leaves its owner.',
    });
  }
  let publicKey: KeyObject;
  let declaredOwner: string | undefined;
  const toml = /^\s*(\[public_key\]|public_key\s*=|fingerprint\s*=)/m.test(text);
  if (toml) {
    const read = readTrustedKeyText(text);
    if ('reason' in read) {
      throw DirigentError.fatal(
        ErrorCode.BAD_SIGNATURE,
        `Not a trusted-key document: it ${read.reason}.`,
        {
          hint: "Give a public key PEM, or a TOML file with [public_key] pem (RYE's trusted key format).",
        },
      );
    }
    publicKey = read.publicKey;
    declaredOwner = read.owner || undefined;
  } else {
    try {
      publicKey = readPublicKey(text).publicKey;
    } catch (err) {
      throw DirigentError.fatal(
        ErrorCode.BAD_SIGNATURE,
        `Not a public key: it ${(err as Error).message}.`,
        {
          hint: "Give an Ed25519 public key PEM (public_key.pem), or RYE's trusted key TOML file.",
        },
      );
    }
  }
  // The standard PEM text, as RYE writes public_key.pem: its fingerprint is the one RYE signs with.
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const who = owner ?? declaredOwner ?? 'unknown';
  const written = await writeTrustedKey(spaceRoot, pem, who);
  return {
    keyId: written.keyId,
    fingerprint: ryeosKeyFingerprint(publicKey),
    owner: who,
    file: written.file,
  };
}

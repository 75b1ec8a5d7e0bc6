/**
 * Checks an item's RYE signature before use (reference §5.5), with Dirigent's policy: tampering
 * and forged signatures are always refused; unsigned items and unknown keys only when the project
 * requires signatures.
 */
import { verify } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import type { SourceLocation } from '../../errors/source-location.js';
import type { ItemKind } from '../item-kind.js';
import type { SpaceName } from '../space.js';
import { normalizeLineEndings, ryeosContentHash, signedContentHash } from './content-hash.js';
import {
  readSignatureLine,
  signatureStyleFor,
  type NotSignedReason,
  type SignatureLine,
} from './signature-line.js';
import type { TrustStore } from './trust-store.js';

/** The outcome of a verification that did not refuse the item. */
export interface Verification {
  /**
   * `verified`: signed, unchanged, by a trusted key. `untrusted`: signed and unchanged, by a key
   * not in the trust store (only when signatures are not required). `unsigned`: no signature
   * (only when signatures are not required).
   */
  status: 'unsigned' | 'verified' | 'untrusted';
  /** The signing key's fingerprint, when signed. */
  keyId?: string;
  /** The trusted key's owner, when verified. */
  owner?: string;
  /** The signed hash, when signed. */
  hash?: string;
  /** When it was signed (`YYYY-MM-DDTHH:MM:SSZ`), when signed. */
  signedAt?: string;
  /**
   * When signed: whether the signature covers all of the item's content (see
   * `SignedContent.coversWholeFile`). `false` for RYE's modern directives, whose `<process>`
   * steps after the XML fence can change without breaking the signature; a warning says so.
   */
  coversWholeFile?: boolean;
  /** What a person should know: uncovered text, untrusted key, placeholder signature lines. */
  warnings: string[];
}

/** How to verify. */
export interface VerifyOptions {
  /** Where to find trusted keys. */
  trust: TrustStore;
  /** Refuse unsigned items and items signed by untrusted keys (default in RYE: always). */
  requireSignatures: boolean;
  /**
   * The space the item was found in. Items of the system space ship with Dirigent (read-only,
   * installed with the package), so `requireSignatures` does not refuse them unsigned; a signed
   * one that does not verify is refused as anywhere else.
   */
  space?: SpaceName;
}

/**
 * Reads `file` and verifies it; see {@link verifyItemText}. Callers that go on to use the file
 * should read it once and call {@link verifyItemText} on that text, so that what is verified is
 * what runs.
 */
export async function verifyItem(
  file: string,
  kind: ItemKind,
  options: VerifyOptions,
): Promise<Verification> {
  return verifyItemText(await readFile(file, 'utf8'), file, kind, options);
}

/**
 * Verifies an item's text, in RYE's order: signature present, hash matches, key trusted,
 * Ed25519 signature valid (the message is the 64-character hex hash as UTF-8).
 *
 * Both line formats verify: `rye:signed` (hash per kind, 16-hex key id) and RYE's current
 * `ryeos:signed` (hash of everything after the line, 64-hex fingerprint, looked up as
 * `TrustStore` says: `config/keys/trusted/<fingerprint>.toml` of a space, or any key file of its
 * two trusted-key folders holding that key).
 *
 * @throws DirigentError `INTEGRITY_FAILED` when the content does not match its signed hash
 *   (always), `BAD_SIGNATURE` when the signature does not verify against the trusted key it names
 *   (always), `UNTRUSTED_KEY` and `UNSIGNED_ITEM` only when `requireSignatures` (and the item
 *   is not of the system space), and `PARTIAL_SIGNATURE` then too for a directive whose
 *   signature leaves out text that runs (RYE's modern layout under a `rye:signed` line).
 */
export async function verifyItemText(
  text: string,
  file: string,
  kind: ItemKind,
  options: VerifyOptions,
): Promise<Verification> {
  const normal = normalizeLineEndings(text);
  const line = readSignatureLine(normal, signatureStyleFor(file));
  const required = options.requireSignatures && options.space !== 'system';
  if (line === undefined || line.kind === 'not-signed') {
    return unsigned(file, kind, line, required);
  }

  const { hash: expected, keyId, timestamp } = line.signature;
  const location: SourceLocation = { file, line: line.line, column: 1 };
  const content = signedContentHash(normal, kind, file);
  // RYE's current tooling hashes bytes as they are: a file it signed with CRLF endings.
  if (content.hash !== expected && line.scheme === 'ryeos' && text !== normal) {
    if (ryeosContentHash(text, file) === expected) content.hash = expected;
  }
  if (content.hash !== expected) {
    throw DirigentError.fatal(
      ErrorCode.INTEGRITY_FAILED,
      `${file} was modified after it was signed (hash ${content.hash.slice(0, 12)}…≠` +
        `${expected.slice(0, 12)}…); re-sign it with \`dirigent sign\` if the change is intended`,
      {
        location,
        hint: `Otherwise restore the version that key ${keyId} signed on ${timestamp}.`,
        details: { expectedHash: expected, actualHash: content.hash, keyId },
      },
    );
  }

  const warnings: string[] = [];
  // A knowledge entry's front matter describes it; a directive's text after the fence runs.
  if (!content.coversWholeFile && required && kind !== 'knowledge') {
    throw DirigentError.fatal(
      ErrorCode.PARTIAL_SIGNATURE,
      `${file} is signed, but its signature does not cover ${content.uncovered}, and this ` +
        'project requires signatures: every line that runs must be signed',
      {
        location,
        hint:
          `Review the whole file, then sign it again: \`dirigent sign ${kind} <item_id>\` writes a ` +
          '`ryeos:signed` line, whose hash covers every byte after it (or move the steps inside the XML fence).',
        details: { keyId, uncovered: content.uncovered },
      },
    );
  }
  if (!content.coversWholeFile) {
    const advice =
      kind === 'directive'
        ? 'RYE signs only the <directive> element; move the steps inside the XML fence to have them signed'
        : "RYE's hash leaves it out";
    warnings.push(
      `The signature of ${file} does not cover ${content.uncovered}, which can change without ` +
        `breaking it (${advice}).`,
    );
  }
  const base = {
    keyId,
    hash: expected,
    signedAt: timestamp,
    coversWholeFile: content.coversWholeFile,
  };

  const { key, skipped } = await options.trust.lookup(keyId);
  if (key === undefined) {
    const ignored = skipped.map((s) => ` (ignored: ${s.file} ${s.reason})`).join('');
    const hint =
      `If you trust the signer, add \`${keyId}.toml\` (fingerprint, owner, [public_key] pem) ` +
      `to \`.ai/${keyId.length === 16 ? 'trusted_keys' : 'config/keys/trusted'}/\` of the project ` +
      `or your user space (\`dirigent keys trust <public key file>\` writes one).${ignored}`;
    if (required) {
      throw DirigentError.fatal(
        ErrorCode.UNTRUSTED_KEY,
        `${file} is signed by key ${keyId}, which is not trusted`,
        { location, hint, details: { keyId, skipped } },
      );
    }
    warnings.push(`${file} is signed by key ${keyId}, which is not trusted. ${hint}`);
    return { status: 'untrusted', ...base, warnings };
  }

  if (!signatureValid(expected, line.signature.signature, key.publicKey)) {
    throw DirigentError.fatal(
      ErrorCode.BAD_SIGNATURE,
      `The Ed25519 signature of ${file} does not verify against trusted key ${keyId}` +
        `${key.owner ? ` (owner ${key.owner})` : ''}`,
      {
        location,
        hint: 'The signature line was forged or damaged: restore the file, or re-sign it with `dirigent sign`.',
        details: { keyId, hash: expected, keyFile: key.file },
      },
    );
  }
  return { status: 'verified', ...base, owner: key.owner, warnings };
}

const NOT_SIGNED: Record<NotSignedReason, string> = {
  placeholder: 'a placeholder signature line',
  validated: 'an old `rye:validated` line',
  'kiwi-mcp': 'an old `kiwi-mcp` line',
  malformed: 'a malformed signature line',
};

function unsigned(
  file: string,
  kind: ItemKind,
  line: Extract<SignatureLine, { kind: 'not-signed' }> | undefined,
  required: boolean,
): Verification {
  const placeholder =
    line === undefined ? '' : ` (line ${line.line} is ${NOT_SIGNED[line.reason]}, not a signature)`;
  if (required) {
    throw DirigentError.fatal(
      ErrorCode.UNSIGNED_ITEM,
      `${file} is not signed${placeholder}, and this project requires signatures`,
      {
        location: { file, line: line?.line ?? 1, column: 1 },
        hint:
          `Review it, then sign it: \`dirigent sign ${kind} <item_id>\` (an item of the ` +
          `read-only system space: \`dirigent load ${kind} <item_id> --to project\` first, then ` +
          'sign the copy).',
      },
    );
  }
  return { status: 'unsigned', warnings: [`${file} is not signed${placeholder}.`] };
}

/**
 * Whether `signature` (base64url, as `rye:signed` lines write it, or standard base64, as
 * `ryeos:signed` lines do) is `publicKey`'s Ed25519 signature of `hash` as UTF-8 text.
 */
export function signatureValid(
  hash: string,
  signature: string,
  publicKey: Parameters<typeof verify>[2],
): boolean {
  // Node's base64 decoder reads both alphabets.
  const bytes = Buffer.from(signature, 'base64');
  if (bytes.length !== 64) return false;
  try {
    return verify(null, Buffer.from(hash, 'utf8'), publicKey, bytes);
  } catch {
    return false;
  }
}

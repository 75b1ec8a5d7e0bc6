/**
 * Errors about the Ed25519 keys that sign items: a key that cannot be read, one of another type,
 * and a private and a public key that are not one pair. Keys come as files (the signing key in
 * its folder) or as PEM text (the library's `signItem`); the hints say how to fix each.
 */
import { DirigentError } from './dirigent-error.js';
import { ErrorCode } from './error-codes.js';

/** Where a key came from: a file, or PEM text passed by a program (`private` or `public`). */
export type KeySource = { file: string } | { pem: 'private' | 'public' };

function named(source: KeySource): string {
  return 'file' in source ? source.file : `The ${source.pem} key PEM`;
}

function newPair(source: KeySource): string {
  return 'file' in source
    ? 'make a new pair with `dirigent keys init --force`'
    : 'make a new pair with generateSigningKey';
}

/** `BAD_SIGNATURE`: `source` holds no key that can be read (`cause` says why). */
export function keyNotReadable(source: KeySource, cause: unknown): DirigentError {
  return DirigentError.fatal(ErrorCode.BAD_SIGNATURE, `${named(source)} holds no readable key.`, {
    cause,
    hint: `Restore the PEM ${'file' in source ? 'file' : 'text'} of an Ed25519 key, or ${newPair(source)}.`,
  });
}

/** `BAD_SIGNATURE`: `source` holds a key of type `type` (undefined: unknown), not Ed25519. */
export function keyNotEd25519(source: KeySource, type: string | undefined): DirigentError {
  const held = type === undefined ? 'a key of unknown type' : `a key of type ${type}`;
  return DirigentError.fatal(
    ErrorCode.BAD_SIGNATURE,
    `${named(source)} holds ${held}, not Ed25519.`,
    { hint: `RYE signatures use Ed25519 keys only: ${newPair(source)}.` },
  );
}

/**
 * `BAD_SIGNATURE`: the private key `privateKey` and the public key `publicKey` (fingerprint
 * `keyId`) are not one key pair, so a signature would not verify.
 */
export function keysNotAPair(
  privateKey: KeySource,
  publicKey: KeySource,
  keyId: string,
): DirigentError {
  return DirigentError.fatal(
    ErrorCode.BAD_SIGNATURE,
    `${named(privateKey)} and ${named(publicKey).replace(/^The /, 'the ')} (${keyId}) are not one key pair.`,
    {
      hint: `Restore the public key written with this private key, or ${newPair(privateKey)}.`,
      details: { keyId },
    },
  );
}

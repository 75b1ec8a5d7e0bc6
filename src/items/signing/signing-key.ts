/**
 * The user's signing key: where it lives and how it is read. It lives in
 * `$DIRIGENT_SIGNING_KEY_DIR`, else `<user space>/keys/` (`~/.ai/keys/`, or
 * `$DIRIGENT_USER_SPACE/keys/`), in RYE A's layout: `private_key.pem` (PKCS#8, mode 0600) and
 * `public_key.pem` (SubjectPublicKeyInfo, mode 0644) in a folder of mode 0700.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { defaultSpaces } from '../space.js';
import type { GeneratedSigningKey } from './sign-item.js';
import { keyFingerprint } from './trust-store.js';
import { keyNotEd25519, keyNotReadable, keysNotAPair } from '../../errors/signing-errors.js';

/** The file names of a signing key pair in its folder (RYE A's). */
export const SIGNING_KEY_FILES = {
  privateKey: 'private_key.pem',
  publicKey: 'public_key.pem',
} as const;

/**
 * The folder of the user's signing key: `$DIRIGENT_SIGNING_KEY_DIR`, else `keys/` in the user
 * space (`defaultSpaces(projectDir, env)[1]`, which honours `$DIRIGENT_USER_SPACE`).
 */
export function signingKeyDir(
  projectDir: string = process.cwd(),
  env: Record<string, string | undefined> = process.env,
): string {
  return env.DIRIGENT_SIGNING_KEY_DIR || join(defaultSpaces(projectDir, env)[1]!.root, 'keys');
}

/**
 * Reads the signing key pair in `dir`.
 *
 * @throws DirigentError `NO_SIGNING_KEY` when there is none (hint: `dirigent keys init`), when a
 *   file cannot be read, or when the private key file can be read or written by anyone but its
 *   owner (refused as ssh refuses such keys); `BAD_SIGNATURE` when the files are not an Ed25519
 *   pair that belongs together.
 */
export async function readSigningKey(dir: string): Promise<GeneratedSigningKey> {
  const privateFile = join(dir, SIGNING_KEY_FILES.privateKey);
  const publicFile = join(dir, SIGNING_KEY_FILES.publicKey);
  const info = await stat(privateFile).catch((err: NodeJS.ErrnoException) => err);
  if (info instanceof Error) {
    if (info.code === 'ENOENT') {
      throw DirigentError.fatal(ErrorCode.NO_SIGNING_KEY, `No signing key in ${dir}.`, {
        hint:
          'Create one with `dirigent keys init` (or set DIRIGENT_SIGNING_KEY_DIR to the folder ' +
          'holding private_key.pem and public_key.pem).',
        details: { dir },
      });
    }
    throw unreadable(privateFile, info);
  }
  if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) {
    const mode = (info.mode & 0o777).toString(8).padStart(4, '0');
    throw DirigentError.fatal(
      ErrorCode.NO_SIGNING_KEY,
      `The private key ${privateFile} is accessible by other users (mode ${mode}); it is not used.`,
      {
        hint: `Make it yours alone: chmod 600 ${privateFile}`,
        details: { file: privateFile, mode },
      },
    );
  }
  const [privateKeyPem, publicKeyPem] = await Promise.all([
    readFile(privateFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw unreadable(privateFile, err);
    }),
    readFile(publicFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') {
        throw DirigentError.fatal(
          ErrorCode.NO_SIGNING_KEY,
          `${dir} holds ${SIGNING_KEY_FILES.privateKey} but no ${SIGNING_KEY_FILES.publicKey}.`,
          {
            hint: 'Restore public_key.pem beside it, or make a new key with `dirigent keys init --force`.',
          },
        );
      }
      throw unreadable(publicFile, err);
    }),
  ]);
  const privateKey = ed25519(() => createPrivateKey(privateKeyPem), privateFile);
  const publicKey = ed25519(() => createPublicKey(publicKeyPem), publicFile);
  const derived = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  if (!derived.equals(publicKey.export({ type: 'spki', format: 'der' }))) {
    throw keysNotAPair({ file: privateFile }, { file: publicFile }, keyFingerprint(publicKeyPem));
  }
  return { privateKeyPem, publicKeyPem, keyId: keyFingerprint(publicKeyPem) };
}

/** The error for a signing key file that cannot be read. */
function unreadable(file: string, err: NodeJS.ErrnoException): DirigentError {
  return DirigentError.fatal(ErrorCode.NO_SIGNING_KEY, `Cannot read ${file}: ${err.message}`, {
    cause: err,
    hint: 'The signing key files must be readable by you (chmod 600 private_key.pem).',
  });
}

/** The key `read` makes of `file`, which must be an Ed25519 key. */
function ed25519(read: () => KeyObject, file: string): KeyObject {
  let key: KeyObject;
  try {
    key = read();
  } catch (err) {
    throw keyNotReadable({ file }, err);
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw keyNotEd25519({ file }, key.asymmetricKeyType);
  }
  return key;
}

/**
 * `dirigent keys init`: a new signing key for the user, trusted in the user space.
 */
import { createPublicKey } from 'node:crypto';
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { generateSigningKey, writeTrustedKey } from './sign-item.js';
import { SIGNING_KEY_FILES } from './signing-key.js';
import { keyFingerprint, ryeosKeyFingerprint } from './trust-store.js';

/** Options of {@link initSigningKey}. */
export interface InitSigningKeyOptions {
  /** Who the key belongs to, as the trusted-key file says. */
  owner: string;
  /** The `.ai/` folder of the space that trusts the new key (the user space). */
  trustIn: string;
  /** Replace a key the folder holds already. */
  force?: boolean;
}

/** What {@link initSigningKey} made. */
export interface InitializedSigningKey {
  dir: string;
  /** The fingerprint `rye:signed` lines name (16 hex characters). */
  keyId: string;
  /** The key's fingerprint in RYE's current format (64 hex characters). */
  fingerprint: string;
  privateKeyFile: string;
  publicKeyFile: string;
  /** The trusted-key file written in {@link InitSigningKeyOptions.trustIn}. */
  trustedKeyFile: string;
}

/**
 * Makes a new Ed25519 signing key in `dir` (folder mode 0700 when created here, private key 0600,
 * public key 0644) and trusts its public key in `options.trustIn` (`trusted_keys/<keyId>.toml`).
 *
 * @throws DirigentError `ITEM_EXISTS` when `dir` holds a key already and `force` is not set.
 */
export async function initSigningKey(
  dir: string,
  options: InitSigningKeyOptions,
): Promise<InitializedSigningKey> {
  const privateKeyFile = join(dir, SIGNING_KEY_FILES.privateKey);
  const publicKeyFile = join(dir, SIGNING_KEY_FILES.publicKey);
  if (!options.force) {
    for (const file of [privateKeyFile, publicKeyFile]) {
      if (!(await exists(file))) continue;
      const publicPem = await readFile(publicKeyFile, 'utf8').catch(() => {
        /* Only to name the key in the message, which says a key is there without it. */
        return undefined;
      });
      throw DirigentError.fatal(
        ErrorCode.ITEM_EXISTS,
        `${dir} holds a signing key already${publicPem ? ` (${keyFingerprint(publicPem)})` : ''}.`,
        {
          hint:
            'Keep it: it signs as before. To replace it (items signed with it then verify only ' +
            'where its public key stays trusted), run `dirigent keys init --force`.',
          details: { dir, file },
        },
      );
    }
  }
  const created = await mkdir(dir, { recursive: true, mode: 0o700 });
  if (created !== undefined) await chmod(dir, 0o700);
  const key = generateSigningKey();
  await writeAtomically(privateKeyFile, key.privateKeyPem, 0o600);
  await writeAtomically(publicKeyFile, key.publicKeyPem, 0o644);
  const trusted = await writeTrustedKey(options.trustIn, key.publicKeyPem, options.owner);
  return {
    dir,
    keyId: key.keyId,
    fingerprint: ryeosKeyFingerprint(createPublicKey(key.publicKeyPem)),
    privateKeyFile,
    publicKeyFile,
    trustedKeyFile: trusted.file,
  };
}

/** Whether `file` exists. */
async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** Writes `text` to `file` through a temporary file beside it, then sets `mode`. */
async function writeAtomically(file: string, text: string, mode: number): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, text, { encoding: 'utf8', mode, flag: 'w' });
  await chmod(temporary, mode);
  await rename(temporary, file);
}

/**
 * The user's signing key and the keys a space trusts, as a person manages them (`dirigent keys`).
 *
 * The signing key lives in `$DIRIGENT_SIGNING_KEY_DIR`, else `<user space>/keys/` (`~/.ai/keys/`,
 * or `$DIRIGENT_USER_SPACE/keys/`), in RYE A's layout: `private_key.pem` (PKCS#8, mode 0600) and
 * `public_key.pem` (SubjectPublicKeyInfo, mode 0644) in a folder of mode 0700. Trusted keys are
 * the TOML files `TrustStore` reads.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import { defaultSpaces, type Space, type SpaceName } from '../space.js';
import { generateSigningKey, writeTrustedKey, type GeneratedSigningKey } from './sign-item.js';
import {
  keyFilesIn,
  keyFingerprint,
  readPublicKey,
  readTrustedKeyFile,
  readTrustedKeyText,
  ryeosKeyFingerprint,
  TRUSTED_KEY_DIRS,
  type KeyFingerprints,
} from './trust-store.js';

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
    throw DirigentError.fatal(
      ErrorCode.BAD_SIGNATURE,
      `${privateFile} and ${publicFile} are not one key pair.`,
      {
        hint: 'Restore the public key written with this private key, or make a new pair with `dirigent keys init --force`.',
      },
    );
  }
  return { privateKeyPem, publicKeyPem, keyId: keyFingerprint(publicKeyPem) };
}

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
      const publicPem = await readFile(publicKeyFile, 'utf8').catch(() => undefined);
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

/** A trusted-key file, as {@link listTrustedKeys} found it. */
export interface TrustedKeyListing {
  /**
   * The fingerprint signature lines name it by: the file's name when that is a fingerprint (16
   * or 64 hex characters), else the key's 64-hex fingerprint.
   */
  keyId: string;
  /** `owner` of the file (`''` when absent or skipped). */
  owner: string;
  space: SpaceName;
  file: string;
  /** `trusted`: a usable key. `skipped`: a file the trust store ignores (see `reason`). */
  status: 'trusted' | 'skipped';
  /** Why a skipped file is ignored. */
  reason?: string;
  /** Both fingerprints of a trusted key. */
  fingerprints?: KeyFingerprints;
}

/**
 * Every trusted-key file of `spaces` (`trusted_keys/*.toml` and `config/keys/trusted/*.toml` of
 * each), valid ones and skipped ones, in lookup order.
 */
export async function listTrustedKeys(spaces: readonly Space[]): Promise<TrustedKeyListing[]> {
  const listing: TrustedKeyListing[] = [];
  for (const space of spaces) {
    for (const dir of TRUSTED_KEY_DIRS) {
      for (const file of await keyFilesIn(join(space.root, dir))) {
        const read = await readTrustedKeyFile(file);
        const stem = basename(file, '.toml');
        if (read === undefined) continue;
        if ('reason' in read) {
          listing.push({
            keyId: stem,
            owner: '',
            space: space.name,
            file,
            status: 'skipped',
            reason: read.reason,
          });
          continue;
        }
        const named = stem === read.fingerprints.rye || stem === read.fingerprints.ryeos;
        listing.push({
          keyId: named ? stem : read.fingerprints.ryeos,
          owner: read.owner,
          space: space.name,
          file,
          status: 'trusted',
          fingerprints: read.fingerprints,
        });
      }
    }
  }
  return listing;
}

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

/** What {@link revokeKey} did. */
export interface RevokedKey {
  /** The key's fingerprints. */
  fingerprints: KeyFingerprints;
  /** The files removed. */
  removed: string[];
  /** Files of the key left in place: the system space's, which is read-only. */
  remaining: { space: SpaceName; file: string }[];
}

/**
 * Stops trusting a key: removes every trusted-key file holding it from the writable spaces given
 * (`trusted_keys/` and `config/keys/trusted/` of each). The system space is never changed; a key
 * it trusts is reported in {@link RevokedKey.remaining}.
 *
 * @param target the spaces to remove it from, or one writable space's `.ai/` folder.
 * @param keyId either fingerprint of the key (16 or 64 hex characters), or at least its first 8.
 * @throws DirigentError `UNTRUSTED_KEY` when no space given trusts such a key, `SPACE_READ_ONLY`
 *   when only the system space does, `INVALID_REQUEST` when `keyId` is not hex or names more than
 *   one key.
 */
export async function revokeKey(
  target: readonly Space[] | string,
  keyId: string,
): Promise<RevokedKey> {
  const spaces: Space[] =
    typeof target === 'string' ? [{ name: 'project', root: target }] : [...target];
  const id = keyId.trim().toLowerCase();
  if (!/^[a-f0-9]{8,64}$/.test(id)) {
    throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `"${keyId}" is not a key fingerprint.`, {
      hint: 'Give the key id `dirigent keys list` shows (16 or 64 hex characters, or its first 8 or more).',
    });
  }
  const found: { space: SpaceName; file: string; fingerprints: KeyFingerprints }[] = [];
  for (const space of spaces) {
    for (const dir of TRUSTED_KEY_DIRS) {
      for (const file of await keyFilesIn(join(space.root, dir))) {
        const read = await readTrustedKeyFile(file);
        if (read === undefined || 'reason' in read) continue;
        const { rye, ryeos } = read.fingerprints;
        if (rye.startsWith(id) || ryeos.startsWith(id)) {
          found.push({ space: space.name, file, fingerprints: read.fingerprints });
        }
      }
    }
  }
  const where =
    typeof target === 'string' ? target : `the ${spaces.map((s) => s.name).join(', ')} space`;
  // Each key found, by its 64-hex fingerprint, with the fingerprint of it that the prefix matched.
  const keys = new Map(
    found.map(({ fingerprints: { rye, ryeos } }) => [ryeos, rye.startsWith(id) ? rye : ryeos]),
  );
  if (keys.size === 0) {
    throw DirigentError.fatal(ErrorCode.UNTRUSTED_KEY, `No trusted key ${keyId} in ${where}.`, {
      hint: '`dirigent keys list` shows the trusted keys and their spaces.',
      details: { keyId },
    });
  }
  if (keys.size > 1) {
    throw DirigentError.fatal(ErrorCode.INVALID_REQUEST, `"${keyId}" names ${keys.size} keys.`, {
      hint: `Give more of the fingerprint: ${[...keys.values()]
        .sort()
        .map((k) => k.slice(0, 16))
        .join(' or ')}.`,
      details: { keyId, matches: [...keys.values()] },
    });
  }
  const writable = found.filter((f) => f.space !== 'system');
  const remaining = found
    .filter((f) => f.space === 'system')
    .map(({ space, file }) => ({ space, file }));
  if (writable.length === 0) {
    throw DirigentError.fatal(
      ErrorCode.SPACE_READ_ONLY,
      `Key ${keyId} is trusted by the system space, which is read-only.`,
      {
        hint: 'System space items and keys ship with Dirigent and cannot be revoked here.',
        details: { files: remaining.map((r) => r.file) },
      },
    );
  }
  for (const { file } of writable) await rm(file, { force: true });
  return { fingerprints: found[0]!.fingerprints, removed: writable.map((f) => f.file), remaining };
}

function unreadable(file: string, err: NodeJS.ErrnoException): DirigentError {
  return DirigentError.fatal(ErrorCode.NO_SIGNING_KEY, `Cannot read ${file}: ${err.message}`, {
    cause: err,
    hint: 'The signing key files must be readable by you (chmod 600 private_key.pem).',
  });
}

function ed25519(read: () => KeyObject, file: string): KeyObject {
  let key: KeyObject;
  try {
    key = read();
  } catch (err) {
    throw DirigentError.fatal(ErrorCode.BAD_SIGNATURE, `${file} holds no readable key.`, {
      cause: err,
      hint: 'Restore the PEM file, or make a new pair with `dirigent keys init --force`.',
    });
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw DirigentError.fatal(
      ErrorCode.BAD_SIGNATURE,
      `${file} holds a ${key.asymmetricKeyType ?? 'key of unknown type'} key, not Ed25519.`,
      { hint: 'RYE signatures use Ed25519 keys only: make one with `dirigent keys init --force`.' },
    );
  }
  return key;
}

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

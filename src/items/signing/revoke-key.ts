/**
 * `dirigent keys revoke`: no longer trusting a key in the writable spaces.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';
import type { Space, SpaceName } from '../space.js';
import {
  keyFilesIn,
  readTrustedKeyFile,
  TRUSTED_KEY_DIRS,
  type KeyFingerprints,
} from './trust-store.js';
import { systemSpaceReadOnly } from '../../errors/item-errors.js';

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
    throw systemSpaceReadOnly(
      `Cannot revoke key ${keyId}, which the system space trusts`,
      'System space items and keys ship with Dirigent and cannot be revoked here.',
      { files: remaining.map((r) => r.file) },
    );
  }
  for (const { file } of writable) await rm(file, { force: true });
  return { fingerprints: found[0]!.fingerprints, removed: writable.map((f) => f.file), remaining };
}

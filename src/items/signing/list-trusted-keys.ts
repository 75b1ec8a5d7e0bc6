/**
 * `dirigent keys list`: the trusted-key files of each space, those the trust store uses and those
 * it skips.
 */
import { basename, join } from 'node:path';
import type { Space, SpaceName } from '../space.js';
import {
  keyFilesIn,
  readTrustedKeyFile,
  TRUSTED_KEY_DIRS,
  type KeyFingerprints,
} from './trust-store.js';

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

/**
 * The user's signing key and the keys a space trusts, as a person manages them (`dirigent keys`).
 *
 * The signing key lives in `$DIRIGENT_SIGNING_KEY_DIR`, else `<user space>/keys/` (`~/.ai/keys/`,
 * or `$DIRIGENT_USER_SPACE/keys/`), in RYE A's layout: `private_key.pem` (PKCS#8, mode 0600) and
 * `public_key.pem` (SubjectPublicKeyInfo, mode 0644) in a folder of mode 0700. Trusted keys are
 * the TOML files `TrustStore` reads.
 */
export {
  initSigningKey,
  type InitializedSigningKey,
  type InitSigningKeyOptions,
} from './init-signing-key.js';
export { listTrustedKeys, type TrustedKeyListing } from './list-trusted-keys.js';
export { revokeKey, type RevokedKey } from './revoke-key.js';
export { readSigningKey, SIGNING_KEY_FILES, signingKeyDir } from './signing-key.js';
export { trustKey, type TrustedKeyWritten } from './trust-key.js';

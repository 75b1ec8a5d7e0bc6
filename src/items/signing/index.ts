/** RYE-compatible signatures: reading, verifying and writing them, and the trust store. */
export {
  formatRyeosSignatureLine,
  formatSignatureLine,
  insertSignatureLine,
  readSignatureLine,
  removeSignatureLine,
  signatureSlot,
  signatureStyleFor,
  type NotSignedReason,
  type RyeSignature,
  type SignatureLine,
  type SignatureStyle,
} from './signature-line.js';
export {
  normalizeLineEndings,
  ryeosContentHash,
  sha256Hex,
  signedContentHash,
  type SignedContent,
} from './content-hash.js';
export {
  keyFilesIn,
  keyFingerprint,
  readPublicKey,
  readTrustedKeyFile,
  readTrustedKeyText,
  ryeosKeyFingerprint,
  TRUSTED_KEY_DIRS,
  TrustStore,
  type KeyFile,
  type KeyFingerprints,
  type KeyLookup,
  type SkippedKeyFile,
  type TrustedKey,
} from './trust-store.js';
export {
  verifyItem,
  signatureValid,
  verifyItemText,
  type Verification,
  type VerifyOptions,
} from './verify-item.js';
export {
  generateSigningKey,
  signItem,
  writeTrustedKey,
  type GeneratedSigningKey,
  type SignOptions,
  type SigningKey,
  type SignResult,
} from './sign-item.js';
export {
  initSigningKey,
  listTrustedKeys,
  readSigningKey,
  revokeKey,
  SIGNING_KEY_FILES,
  signingKeyDir,
  trustKey,
  type InitializedSigningKey,
  type InitSigningKeyOptions,
  type RevokedKey,
  type TrustedKeyListing,
  type TrustedKeyWritten,
} from './key-ring.js';

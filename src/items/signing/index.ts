/** RYE-compatible signatures: reading, verifying and writing them, and the trust store. */
export {
  formatSignatureLine,
  insertSignatureLine,
  readSignatureLine,
  removeSignatureLine,
  signatureStyleFor,
  type NotSignedReason,
  type RyeSignature,
  type SignatureLine,
  type SignatureStyle,
} from './signature-line.js';
export {
  normalizeLineEndings,
  sha256Hex,
  signedContentHash,
  type SignedContent,
} from './content-hash.js';
export {
  keyFingerprint,
  TRUSTED_KEY_DIRS,
  TrustStore,
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

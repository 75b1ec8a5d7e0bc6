/**
 * RYE's signature line (reference §5.1): `rye:signed:TIMESTAMP:HASH:SIG:KEYID`, optionally followed
 * by a registry provenance suffix `|provider@user`, inside a comment whose form depends on the
 * file's extension. Pure: no I/O. Texts given here have `\n` line endings (see
 * `normalizeLineEndings`).
 *
 * RYE's current tooling writes `ryeos:signed:TIMESTAMP:HASH:SIG:FINGERPRINT` in the same place
 * (Markdown `<!-- … -->`, `#`, `//`): the signature in standard base64 (`+`, `/`), the key's
 * fingerprint as 64 hex characters (SHA-256 of the raw 32-byte public key), and a timestamp that
 * may itself hold colons (the fields are read from the right, as RYE does). Dirigent reads and
 * verifies such lines ({@link SignatureLine} `scheme: 'ryeos'`) and writes `rye:signed` lines,
 * or `ryeos:signed` lines where only they cover the whole item (`SignOptions.wholeFile`).
 */
import { extname } from 'node:path';

/** How a file type carries its signature line. */
export interface SignatureStyle {
  /** The comment opener before ` rye:signed:…`: `<!--`, `#` or `//`. */
  prefix: '<!--' | '#' | '//';
  /** What closes the comment after the last field: ` -->` for Markdown, nothing otherwise. */
  suffix: '' | ' -->';
  /** Whether the line goes after a leading `#!/…` shebang line (line 2) instead of line 1. */
  afterShebang: boolean;
}

/** The fields of a real `rye:signed:` (or `ryeos:signed:`) line. */
export interface RyeSignature {
  /** `YYYY-MM-DDTHH:MM:SSZ`, UTC (`ryeos:signed` lines may use another ISO 8601 form). */
  timestamp: string;
  /** SHA-256 of the covered content, 64 lowercase hex characters. */
  hash: string;
  /**
   * The Ed25519 signature of `hash` (as UTF-8 text): base64url with padding in `rye:signed`
   * lines, standard base64 in `ryeos:signed` lines.
   */
  signature: string;
  /**
   * The signing key's fingerprint: 16 lowercase hex characters in `rye:signed` lines (SHA-256 of
   * the public key PEM text), 64 in `ryeos:signed` lines (SHA-256 of the raw public key).
   */
  keyId: string;
  /** The registry provenance suffix `|provider@username`, when present. */
  registry?: { provider: string; username: string };
}

/** Why a line that looks like a signature line is not a signature. */
export type NotSignedReason = 'placeholder' | 'validated' | 'kiwi-mcp' | 'malformed';

/** What the signature slot of a file (line 1, or line 2 after a shebang) holds. */
export type SignatureLine =
  | {
      kind: 'signed';
      line: number;
      text: string;
      signature: RyeSignature;
      /**
       * `ryeos` for a `ryeos:signed:` line, whose hash covers everything after the line (see
       * `signedContentHash`); absent for a `rye:signed:` line.
       */
      scheme?: 'ryeos';
    }
  | { kind: 'not-signed'; line: number; text: string; reason: NotSignedReason };

const MARKDOWN: SignatureStyle = { prefix: '<!--', suffix: ' -->', afterShebang: false };
const HASH_AFTER_SHEBANG: SignatureStyle = { prefix: '#', suffix: '', afterShebang: true };
const HASH_LINE_ONE: SignatureStyle = { prefix: '#', suffix: '', afterShebang: false };
// RYE B writes `//` on line 1 of JS/TS files. A shebang must stay on line 1 for the file to run,
// so Dirigent looks after one too; a file without a shebang reads the same either way.
const SLASHES: SignatureStyle = { prefix: '//', suffix: '', afterShebang: true };

const STYLES: Record<string, SignatureStyle> = {
  '.md': MARKDOWN,
  '.py': HASH_AFTER_SHEBANG,
  '.yaml': HASH_AFTER_SHEBANG,
  '.yml': HASH_AFTER_SHEBANG,
  '.json': HASH_AFTER_SHEBANG,
  '.sh': HASH_AFTER_SHEBANG,
  // Config files (TOML) carry the line on line 1 whatever follows (RYE: after_shebang false).
  '.toml': HASH_LINE_ONE,
  '.js': SLASHES,
  '.ts': SLASHES,
  '.mjs': SLASHES,
  '.cjs': SLASHES,
};

/**
 * The signature style of a file, from its extension. Unknown extensions get RYE's default: `#`
 * after a shebang.
 */
export function signatureStyleFor(file: string): SignatureStyle {
  return STYLES[extname(file).toLowerCase()] ?? HASH_AFTER_SHEBANG;
}

const SIGNED_FIELDS =
  '(\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z)' +
  ':([a-f0-9]{64})' +
  ':([A-Za-z0-9_-]+={0,2})' +
  ':([a-f0-9]{16})' +
  '(?:\\|([A-Za-z0-9_-]+)@([A-Za-z0-9_-]+))?';

const SHEBANG = /^#!\/[^\n]*\n/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function signedPattern(style: SignatureStyle): RegExp {
  const suffix = style.suffix === '' ? '' : escapeRegExp(style.suffix);
  return new RegExp(`^${escapeRegExp(style.prefix)} rye:signed:${SIGNED_FIELDS}${suffix}[ \\t]*$`);
}

function markerPattern(style: SignatureStyle): RegExp {
  return new RegExp(`^${escapeRegExp(style.prefix)} (rye|kiwi-mcp):(validated|signed):`);
}

/** Where the signature slot of a text is: its line number, its text, and the offset after it. */
export function signatureSlot(
  text: string,
  style: SignatureStyle,
): { line: number; start: number; end: number; text: string } {
  const shebang = style.afterShebang ? SHEBANG.exec(text) : null;
  const start = shebang ? shebang[0].length : 0;
  const newline = text.indexOf('\n', start);
  const end = newline === -1 ? text.length : newline + 1;
  const lineText = text.slice(start, newline === -1 ? text.length : newline);
  return { line: shebang ? 2 : 1, start, end, text: lineText };
}

/**
 * Reads the signature slot of a file: line 1, or line 2 when the style allows a shebang and the
 * file starts with `#!/`. Returns `undefined` when the slot holds no `rye:`/`ryeos:`/`kiwi-mcp:`
 * marker at all. Placeholders (`…:placeholder:unsigned:unsigned`, `ryeos:signed placeholder`),
 * `rye:validated:` and `kiwi-mcp:` lines, and lines that start like a signature but do not
 * parse, are `not-signed`: RYE treats all of them as unsigned.
 */
export function readSignatureLine(text: string, style: SignatureStyle): SignatureLine | undefined {
  const slot = signatureSlot(text, style);
  const lineText = slot.text;
  const line = slot.line;
  if (ryeosMarker(style).test(lineText)) return readRyeosLine(lineText, line, style);
  const marker = markerPattern(style).exec(lineText);
  if (!marker) return undefined;
  const m = signedPattern(style).exec(lineText);
  if (m) {
    const signature: RyeSignature = {
      timestamp: m[1]!,
      hash: m[2]!,
      signature: m[3]!,
      keyId: m[4]!,
    };
    if (m[5] !== undefined && m[6] !== undefined) {
      signature.registry = { provider: m[5], username: m[6] };
    }
    return { kind: 'signed', line, text: lineText, signature };
  }
  const reason: NotSignedReason =
    marker[1] === 'kiwi-mcp'
      ? 'kiwi-mcp'
      : marker[2] === 'validated'
        ? 'validated'
        : /:(placeholder|unsigned)\b/.test(lineText)
          ? 'placeholder'
          : 'malformed';
  return { kind: 'not-signed', line, text: lineText, reason };
}

function ryeosMarker(style: SignatureStyle): RegExp {
  return new RegExp(`^\\s*${escapeRegExp(style.prefix)}\\s*ryeos:signed(?=[:\\s]|$)`);
}

const RYEOS_HASH = /^[a-f0-9]{64}$/;
const RYEOS_SIGNATURE = /^[A-Za-z0-9+/_-]+={0,2}$/;
const RYEOS_KEY_ID = /^(?:[a-f0-9]{16}|[a-f0-9]{64})$/;

/**
 * A `ryeos:signed:` line, read as RYE reads it: the comment opener and (for Markdown) `-->`
 * stripped with the spaces around them, then the four fields split from the right, so that the
 * timestamp may hold colons.
 */
function readRyeosLine(lineText: string, line: number, style: SignatureStyle): SignatureLine {
  let payload = lineText.trim().slice(style.prefix.length).trimStart().slice('ryeos:signed'.length);
  const suffix = style.suffix.trim();
  const closed = suffix === '' || payload.trimEnd().endsWith(suffix);
  if (suffix !== '' && closed) payload = payload.trimEnd().slice(0, -suffix.length);
  payload = payload.trimEnd();
  const fields = payload.startsWith(':') ? payload.slice(1).split(':') : [];
  if (closed && fields.length >= 4) {
    const keyId = fields.pop()!;
    const signature = fields.pop()!;
    const hash = fields.pop()!;
    const timestamp = fields.join(':');
    if (
      RYEOS_HASH.test(hash) &&
      RYEOS_SIGNATURE.test(signature) &&
      RYEOS_KEY_ID.test(keyId) &&
      /^\S+$/.test(timestamp)
    ) {
      return {
        kind: 'signed',
        line,
        text: lineText,
        signature: { timestamp, hash, signature, keyId },
        scheme: 'ryeos',
      };
    }
  }
  const reason: NotSignedReason = /placeholder|unsigned/.test(payload)
    ? 'placeholder'
    : 'malformed';
  return { kind: 'not-signed', line, text: lineText, reason };
}

/** Formats a signature line in `style`, without the line ending. */
export function formatSignatureLine(signature: RyeSignature, style: SignatureStyle): string {
  const registry = signature.registry
    ? `|${signature.registry.provider}@${signature.registry.username}`
    : '';
  const fields = `${signature.timestamp}:${signature.hash}:${signature.signature}:${signature.keyId}`;
  return `${style.prefix} rye:signed:${fields}${registry}${style.suffix}`;
}

/**
 * Formats a `ryeos:signed` line in `style`, without the line ending: RYE's current format, whose
 * hash covers every byte after the line. `signature.signature` is standard base64 and
 * `signature.keyId` the key's 64-hex fingerprint (`ryeosKeyFingerprint`).
 */
export function formatRyeosSignatureLine(signature: RyeSignature, style: SignatureStyle): string {
  const fields = `${signature.timestamp}:${signature.hash}:${signature.signature}:${signature.keyId}`;
  return `${style.prefix} ryeos:signed:${fields}${style.suffix}`;
}

/**
 * Removes the signature slot's line the way RYE does before hashing and re-signing: for Markdown,
 * a leading `<!-- (rye|kiwi-mcp):(validated|signed):…-->` line; for the other styles, the first
 * `<prefix> (rye|kiwi-mcp):(validated|signed):…` line after an optional shebang (kept). Only a
 * line that ends in `\n` is removed, as in RYE. A `ryeos:signed` line (or placeholder) in the
 * slot is removed too, with its line ending if it has one.
 */
export function removeSignatureLine(text: string, style: SignatureStyle): string {
  const slot = signatureSlot(text, style);
  if (ryeosMarker(style).test(slot.text)) return text.slice(0, slot.start) + text.slice(slot.end);
  if (style.prefix === '<!--') {
    return text.replace(/^<!-- (?:rye|kiwi-mcp):(?:validated|signed):[^>]+-->\n/, '');
  }
  const shebang = SHEBANG.exec(text)?.[0] ?? '';
  const rest = text.slice(shebang.length);
  const pattern = new RegExp(
    `^${escapeRegExp(style.prefix)} (?:rye|kiwi-mcp):(?:validated|signed):[^\\n]+\\n`,
  );
  return shebang + rest.replace(pattern, '');
}

/**
 * Inserts a signature line (without line ending) into a text that has none: after a leading
 * shebang when the style allows it, else as line 1.
 */
export function insertSignatureLine(text: string, line: string, style: SignatureStyle): string {
  const shebang = style.afterShebang ? SHEBANG.exec(text)?.[0] : undefined;
  if (shebang !== undefined) return `${shebang}${line}\n${text.slice(shebang.length)}`;
  return `${line}\n${text}`;
}

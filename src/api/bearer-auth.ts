/**
 * Bearer tokens for the HTTP API. Tokens are kept only as SHA-256 digests, and a presented token
 * is hashed and compared with every digest in constant time (`timingSafeEqual`), so neither the
 * comparison nor an early exit tells how much of a guess was right.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** The tokens a server accepts; see the module comment. */
export class BearerAuth {
  private readonly digests: Buffer[];

  /** @param tokens - the accepted tokens (at least one; surrounding spaces are not part of one). */
  constructor(tokens: readonly string[]) {
    this.digests = [...new Set(tokens.map((t) => t.trim()).filter((t) => t !== ''))].map(sha256);
    if (this.digests.length === 0) throw new Error('BearerAuth needs at least one token.');
  }

  /** How many distinct tokens are accepted. */
  get size(): number {
    return this.digests.length;
  }

  /**
   * The hex digest of the token an `Authorization` header carries when it is one of ours (the
   * key its rate limit is kept under), else undefined.
   */
  check(header: string | undefined): string | undefined {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
    if (match === null) return undefined;
    const presented = sha256(match[1]!);
    let found = false;
    // Every digest is compared, whatever matched before: the time taken does not depend on which.
    for (const digest of this.digests) found = timingSafeEqual(presented, digest) || found;
    return found ? presented.toString('hex') : undefined;
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** A response body as text, in the charset its content type names. */
import { TextDecoder } from 'node:util';

/**
 * `body` decoded with the `charset` of `contentType` (UTF-8 when none, or one the platform does
 * not know); a byte order mark decides first, as browsers do.
 */
export function decodeBody(body: Buffer, contentType: string | undefined): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset ?? 'utf-8');
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  return decoder.decode(body);
}

/** Whether `contentType` is text a person or a program reads (not images, archives, …). */
export function isTextual(contentType: string): boolean {
  return /^text\/|[/+](json|xml|javascript|ecmascript|x-www-form-urlencoded|yaml|toml|csv)\b/i.test(
    contentType,
  );
}

import { readFileSync } from 'node:fs';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/**
 * The API tokens configured for a server: `DIRIGENT_API_TOKENS` (comma-separated) and the lines
 * of a tokens file (one token a line; blank lines and lines starting with `#` are skipped),
 * together, without duplicates. A tokens file that cannot be read is `INVALID_CONFIG`.
 */
export function readApiTokens(
  tokensFile: string | undefined,
  env: Record<string, string | undefined> = process.env,
): string[] {
  const tokens = (env.DIRIGENT_API_TOKENS ?? '').split(',');
  if (tokensFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(tokensFile, 'utf8');
    } catch (err) {
      throw DirigentError.fatal(
        ErrorCode.INVALID_CONFIG,
        `Cannot read the tokens file ${tokensFile}: ${(err as Error).message}`,
        { hint: 'Pass a readable file with one token a line (--tokens-file).' },
      );
    }
    tokens.push(...text.split(/\r?\n/).filter((line) => !line.trim().startsWith('#')));
  }
  return [...new Set(tokens.map((t) => t.trim()).filter((t) => t !== ''))];
}

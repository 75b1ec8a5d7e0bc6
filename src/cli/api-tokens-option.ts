/**
 * The bearer tokens a server command (`serve`, `mcp --http`) accepts: from `--tokens-file` or
 * `DIRIGENT_API_TOKENS`, or none with `--no-auth` (said loudly). Problems are told on stderr.
 */
import { readApiTokens } from '../api/read-api-tokens.js';
import { DirigentError } from '../errors/dirigent-error.js';

const say = (line: string) => process.stderr.write(`${line}\n`);

/**
 * The tokens, `false` with authentication off, or `undefined` when the command cannot start
 * (no token while authentication is on, or an unreadable tokens file): exit 2 then.
 */
export function apiTokensOption(
  command: string,
  opts: { auth: boolean; tokensFile?: string },
): string[] | false | undefined {
  if (!opts.auth) {
    say(
      `warning: authentication is off (--no-auth): anyone who reaches the port can use ${command} as this user.`,
    );
    return false;
  }
  let tokens: string[];
  try {
    tokens = readApiTokens(opts.tokensFile);
  } catch (err) {
    say(DirigentError.from(err).describe());
    return undefined;
  }
  if (tokens.length === 0) {
    say(
      `dirigent ${command} needs API tokens: set DIRIGENT_API_TOKENS (comma-separated) or pass --tokens-file <file> (one token a line). To serve without authentication, pass --no-auth.`,
    );
    return undefined;
  }
  if (tokens.some((t) => t.length < 16))
    say('warning: an API token shorter than 16 characters is easy to guess.');
  return tokens;
}

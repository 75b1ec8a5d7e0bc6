/**
 * docs/cli.md's list of commands is the one the built CLI's own help gives: adding a command or an
 * option without `node scripts/cli-doc.mjs` fails here. Reads `dist/cli/main.js` (`npm test`
 * builds first).
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  allHelp,
  CLI_MAIN,
  CLI_PAGE,
  cliReference,
  commandsOf,
  formatPage,
  withCliReference,
} from '../../scripts/cli-doc.mjs';

describe('docs/cli.md', () => {
  it('holds every command as dirigent --help prints it (node scripts/cli-doc.mjs)', async () => {
    expect(existsSync(CLI_MAIN), 'dist/cli/main.js is missing: run npm run build').toBe(true);
    const helps = await allHelp(CLI_MAIN);
    const page = readFileSync(CLI_PAGE, 'utf8');
    const expected = await formatPage(withCliReference(page, cliReference(helps)));
    expect(page, 'docs/cli.md differs from the CLI: run node scripts/cli-doc.mjs').toBe(expected);

    // Not vacuous: subcommands were found and each has its section.
    const titles = helps.map(([words]) => ['dirigent', ...words].join(' '));
    expect(titles).toEqual(expect.arrayContaining(['dirigent run', 'dirigent tool run']));
    for (const title of titles) expect(page).toContain(`### ${title}\n`);
  }, 120_000);

  it('finds the commands a help text lists, leaving out help', () => {
    const help = [
      'Usage: dirigent tool [options] [command]',
      '',
      'Commands:',
      '  run [options] <item_id>     Run one tool.',
      '  create [options] <item_id>  Validate a new tool, write it into a space and',
      '                              register it in enabled.json.',
      '  help [command]              display help for command',
    ].join('\n');
    expect(commandsOf(help)).toEqual(['run', 'create']);
    expect(commandsOf('Usage: dirigent status [options] <runId>')).toEqual([]);
  });
});

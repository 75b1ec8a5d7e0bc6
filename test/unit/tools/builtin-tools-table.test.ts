/**
 * docs/tools.md's table of built-in tools is the one the tools' own schemas give: adding a tool or a
 * parameter without `npm run docs:tools` fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../../../src/tools/builtin/index.js';
import { builtinToolsTable, withToolsTable } from '../../../src/tools/builtin-tools-table.js';
import { RYE_ALIAS_TOOLS } from '../../../src/tools/rye-alias-tools.js';
import { REPO_ROOT } from '../../support/paths.js';

describe('the table of built-in tools in docs/tools.md', () => {
  const file = join(REPO_ROOT, 'docs', 'tools.md');
  const readme = readFileSync(file, 'utf8');

  it('is generated from the schemas of every built-in tool and RYE name (npm run docs:tools)', async () => {
    const expected = await format(
      withToolsTable(readme, builtinToolsTable(BUILTIN_TOOLS, RYE_ALIAS_TOOLS)),
      {
        ...(await resolveConfig(file)),
        parser: 'markdown',
      },
    );
    expect(readme, 'docs/tools.md differs from the tools: run npm run docs:tools').toBe(expected);
  });

  it('names every tool and every parameter', () => {
    const table = builtinToolsTable(BUILTIN_TOOLS, RYE_ALIAS_TOOLS);
    for (const tool of [...BUILTIN_TOOLS, ...RYE_ALIAS_TOOLS]) {
      expect(table).toContain(`\`${tool.itemId}\``);
    }
    for (const tool of BUILTIN_TOOLS) {
      const row = table.split('\n').find((l) => l.startsWith(`| \`${tool.itemId}\``))!;
      for (const name of Object.keys(
        (tool.paramsSchema as { properties?: object }).properties ?? {},
      ))
        expect(row, `${tool.itemId} ${name}`).toContain(`\`${name}\``);
    }
  });
});

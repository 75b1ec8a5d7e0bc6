// `npm run docs:tools`: rewrites docs/tools.md's table of built-in tools from the tools' own schemas
// (test/unit/tools/builtin-tools-table.test.ts fails when docs/tools.md differs from it).
import { readFileSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import { builtinToolsTable, withToolsTable } from '../dist/src/tools/builtin-tools-table.js';
import { BUILTIN_TOOLS } from '../dist/src/tools/builtin/index.js';
import { RYE_ALIAS_TOOLS } from '../dist/src/tools/rye-alias-tools.js';

const file = new URL('../docs/tools.md', import.meta.url);
const readme = readFileSync(file, 'utf8');
const updated = await format(
  withToolsTable(readme, builtinToolsTable(BUILTIN_TOOLS, RYE_ALIAS_TOOLS)),
  {
    ...(await resolveConfig(file.pathname)),
    parser: 'markdown',
  },
);
writeFileSync(file, updated);
console.log(
  updated === readme
    ? 'docs/tools.md: the table of built-in tools is current.'
    : 'docs/tools.md: table of built-in tools rewritten.',
);

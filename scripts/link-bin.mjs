// Links the built CLI into node_modules/.bin so that `npx dirigent` works from the repository
// root after `npm ci` (npm links the bins of dependencies, not the package's own).
import { chmodSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'dist', 'cli', 'main.js');
const bin = join(root, 'node_modules', '.bin', 'dirigent');
mkdirSync(dirname(bin), { recursive: true });
rmSync(bin, { force: true });
symlinkSync(relative(dirname(bin), target), bin);
chmodSync(target, 0o755);

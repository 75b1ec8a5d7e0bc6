#!/usr/bin/env node
/**
 * Adds to package-lock.json the platform packages that npm (11.x) leaves out of it: optional
 * dependencies for other operating systems and CPUs. `npm ci` refuses a lock without them
 * ("Missing: … from lock file"). Run it after `npm install` changes the lock:
 *   node scripts/complete-lock.mjs
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;
let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${path}/node_modules/${name}`;
    if (packages[`node_modules/${name}`] || packages[nested]) continue;
    let info;
    try {
      info = JSON.parse(
        execFileSync(
          'npm',
          [
            'view',
            `${name}@${spec}`,
            '--json',
            'version',
            'dist.integrity',
            'os',
            'cpu',
            'libc',
            'license',
          ],
          {
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'ignore'],
          },
        ),
      );
    } catch {
      // A package that names platform builds it never published (msgpackr-extract 3.0.7 did):
      // pin it to a version that has them, with "overrides" in package.json.
      console.warn(`${path} wants ${name}@${spec}, which the registry does not have`);
      continue;
    }
    const v = Array.isArray(info) ? info[info.length - 1] : info;
    packages[`node_modules/${name}`] = {
      version: v.version,
      integrity: v['dist.integrity'],
      ...(v.cpu && { cpu: [].concat(v.cpu) }),
      ...(v.libc && { libc: [].concat(v.libc) }),
      ...(v.license && { license: v.license }),
      optional: true,
      ...(v.os && { os: [].concat(v.os) }),
    };
    added++;
    console.log(`added ${name}@${v.version}`);
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) =>
    a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0,
  ),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`${added} platform package(s) added to package-lock.json`);

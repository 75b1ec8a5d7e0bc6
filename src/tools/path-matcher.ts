/** Glob patterns over project paths, for the search tools' `pattern`, `include` and `exclude`. */
import type picomatchFn from 'picomatch';
import { lazyPackage } from '../lazy-package.js';
import { DirigentError, ErrorCode } from '../errors/index.js';

const picomatch = lazyPackage<typeof picomatchFn>('picomatch');

/**
 * A test of paths (relative to the search's folder, with `/`) against `patterns`, true when one
 * matches. A pattern without a slash matches a file's name at any depth (`*.ts`, as ripgrep's
 * `-g` and RYE's `glob` read it); one with a slash matches the whole path (`src/**\/*.ts`).
 * `*` matches names that start with a dot too. Braces (`*.{ts,md}`) and extglobs work as in
 * picomatch. A pattern that does not compile is a fatal `INVALID_PARAMS` naming `param`.
 */
export function pathMatcher(
  patterns: string | readonly string[],
  param: string,
): (path: string) => boolean {
  const list = typeof patterns === 'string' ? [patterns] : patterns;
  try {
    // A pattern without a slash is tested on the name (picomatch's own `basename` option applies
    // to every pattern given with it, and costs a call per test).
    const tests = list.map((p) => {
      const glob = p.replace(/^\.\//, '');
      const test = picomatch()(glob, { dot: true });
      return glob.includes('/')
        ? test
        : (path: string) => test(path.slice(path.lastIndexOf('/') + 1));
    });
    return tests.length === 1 ? tests[0]! : (path) => tests.some((test) => test(path));
  } catch (err) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_PARAMS,
      `${param} ${JSON.stringify(patterns)} is not a glob pattern: ${(err as Error).message}`,
      { hint: `Fix ${param}, e.g. "*.ts" or "src/**/*.md".`, cause: err },
    );
  }
}

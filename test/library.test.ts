/** The library entry point: what an application embedding Dirigent imports. */
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

describe('import from "dirigent"', () => {
  it('runs a directive through the front door, one object made from a project', () => {
    const script = `
      import { Dirigent } from 'dirigent';
      const dirigent = await Dirigent.open({ project: process.cwd() });
      const record = await dirigent.run({ directive: ${JSON.stringify(join(ROOT, 'directives', 'hello.md'))}, inputs: { name: 'Ada' }, allowFile: true });
      const again = await dirigent.get(record.runId);
      await dirigent.close();
      console.log(JSON.stringify({ record, again: again.status, mode: dirigent.mode }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const { record, again, mode } = JSON.parse(out) as {
      record: { status: string; outputs: unknown };
      again: string;
      mode: string;
    };
    expect(record).toMatchObject({ status: 'completed', outputs: { greeting: 'Hello, Ada!' } });
    expect([again, mode]).toEqual(['completed', 'embedded']);
  });

  it('runs a directive from code with the exported engine, loader and built-in tools', () => {
    // A separate Node process resolves the package by its name, through package.json "exports".
    const script = `
      import { BuiltinDispatcher, DirectiveLoader, Engine } from 'dirigent';
      const engine = new Engine({ projectDir: process.cwd(), dispatcher: new BuiltinDispatcher(), loader: new DirectiveLoader(process.cwd()) });
      const record = await engine.run(await engine.loader.loadFile(${JSON.stringify(join(ROOT, 'directives', 'hello.md'))}), { name: 'Ada' });
      console.log(JSON.stringify(record));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const record = JSON.parse(out) as { status: string; outputs: unknown };
    expect(record).toMatchObject({ status: 'completed', outputs: { greeting: 'Hello, Ada!' } });
  });

  it('offers the distributed engine as "dirigent/distributed", without loading it from "dirigent"', () => {
    const script = `
      const main = await import('dirigent');
      const distributed = await import('dirigent/distributed');
      console.log(JSON.stringify({ main: 'RunWorker' in main, workers: ['RunWorker', 'ToolWorker', 'RunsClient', 'RedisRunStore'].every((n) => typeof distributed[n] === 'function'), signing: typeof main.verifyItem }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({ main: false, workers: true, signing: 'function' });
  });
});

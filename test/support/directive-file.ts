import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DirectiveLoader } from '../../src/engine/directive-loader.js';
import type { RunSource } from '../../src/redis/run-job.js';
import { runSourceOf } from '../../src/redis/run-source.js';

/**
 * Writes `<dir>/<name>.md`: a directive named `name` (version 1.0.0) whose XML body is `xml`, in
 * the Markdown fence the loader reads. Returns the file's path.
 */
export function writeDirective(dir: string, name: string, xml: string): string {
  const file = join(dir, `${name}.md`);
  writeFileSync(
    file,
    `# ${name}\n\n\`\`\`xml\n<directive name="${name}" version="1.0.0">${xml}</directive>\n\`\`\`\n`,
  );
  return file;
}

/**
 * Writes directive `name` (XML body `xml`) into `project`'s `.ai/directives/`, and returns what a
 * start job carries of it, as a client on Redis sends it.
 */
export async function projectRunSource(
  project: string,
  name: string,
  xml: string,
): Promise<RunSource> {
  const dir = join(project, '.ai', 'directives');
  mkdirSync(dir, { recursive: true });
  const file = writeDirective(dir, name, xml);
  const loader = new DirectiveLoader(project);
  return runSourceOf(await loader.loadFile(file), loader.items);
}

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

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

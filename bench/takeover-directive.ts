/** The directive the takeover benchmark keeps its workers busy with. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes `hold.md` (one bash step that sleeps 20 s, five attempts) into the project; its file. */
export function writeDirectiveFile(project: string): string {
  const dir = join(project, '.ai', 'directives');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'hold.md');
  writeFileSync(
    file,
    `# hold\n\nHolds a worker's tool slot for a while.\n\n\`\`\`xml\n<directive name="hold" version="1.0.0">\n<process><step name="sleep"><retry attempts="5" backoff="fixed" delay_ms="100"/><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="sleep 20"/></execute></step></process>\n</directive>\n\`\`\`\n`,
  );
  return file;
}

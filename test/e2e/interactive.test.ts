/**
 * In a terminal, `dirigent run` asks the person for the answer to an instruction step instead of
 * leaving the run waiting. `script` (util-linux) gives the CLI a real pseudo-terminal.
 */
import { spawn } from 'node:child_process';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alive } from '../support/process-alive.js';
import { CLI_MAIN } from '../support/paths.js';
import { waitFor } from '../support/wait-for.js';

const ASK = `# Ask

\`\`\`xml
<directive name="ask" version="1.0.0">
  <process>
    <step name="name_it"><instruction>What should the release be called?</instruction></step>
    <step name="say"><render>Release: \${steps.name_it.result}</render></step>
  </process>
  <outputs><output name="text" value="\${steps.say.result}"/></outputs>
</directive>
\`\`\`
`;

let project: string;
beforeEach(async () => {
  project = await mkdtemp(join(tmpdir(), 'dirigent-tty-'));
  await writeFile(join(project, 'ask.md'), ASK);
});
afterEach(() => rm(project, { recursive: true, force: true }));

/** Runs `command` in a pseudo-terminal, typing `answer` once `prompt` appears. */
function inTerminal(
  command: string,
  prompt: string,
  answer: string,
): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: project });
    let output = '';
    let answered = false;
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (!answered && output.includes(prompt)) {
        answered = true;
        child.stdin.write(`${answer}\n`);
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, output: output.replaceAll('\r', '') });
    });
  });
}

describe('dirigent run in a terminal', () => {
  it('cancels the run and its running work on Ctrl-C (SIGINT), exiting 1', async () => {
    await writeFile(
      join(project, 'slow.md'),
      '# Slow\n\n```xml\n<directive name="slow" version="1.0.0"><process><step name="nap"><execute item_type="tool" item_id="dirigent/shell/bash"><param name="command" value="echo $$ > nap.pid; sleep 30"/></execute></step></process></directive>\n```\n',
    );
    const child = spawn(process.execPath, [CLI_MAIN, 'run', 'slow.md', '--json'], { cwd: project });
    let out = '';
    let errOut = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (errOut += c.toString()));
    const pidFile = join(project, 'nap.pid');
    await waitFor(() => exists(pidFile), { what: 'the tool to write its pid', timeoutMs: 15_000 });
    const shellPid = Number((await readFile(pidFile, 'utf8')).trim());
    child.kill('SIGINT');
    const code = await new Promise((r) => child.on('close', r));
    expect(code, `exit status; stdout: ${out}; stderr: ${errOut}`).toBe(1);
    expect(JSON.parse(out)).toMatchObject({
      status: 'cancelled',
      steps: [{ name: 'nap', status: 'cancelled' }],
      error: { code: 'CANCELLED' },
    });
    expect(alive(shellPid), 'the shell running `sleep 30` is gone').toBe(false);
  });

  it('asks for the answer to an instruction and continues the run with it', async () => {
    const { code, output } = await inTerminal(
      `node ${CLI_MAIN} run ask.md`,
      'answer (JSON or text) >',
      '"Aurora"',
    );
    expect(output).toContain('What should the release be called?');
    expect(output).toContain('text: Release: Aurora');
    expect(code).toBe(0);
  });

  it('leaves the run waiting with --no-interactive', async () => {
    const { code, output } = await inTerminal(
      `node ${CLI_MAIN} run ask.md --no-interactive`,
      'never',
      '',
    );
    expect(output).toMatch(/waiting for signal "name_it": dirigent signal \S+ name_it/);
    expect(code).toBe(3);
  });
});

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

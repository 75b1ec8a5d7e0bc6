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

const TYPED = `# Typed

\`\`\`xml
<directive name="typed" version="1.0.0">
  <process>
    <step name="review">
      <instruction>Ship the release?
        <answer name="approved" type="boolean" required="true">Whether it ships</answer>
        <answer name="days" type="integer">Days to wait</answer>
        <answer name="note" type="string"/>
      </instruction>
    </step>
    <step name="window"><wait signal="window"><answer type="number">Hours until it opens</answer></wait></step>
  </process>
  <outputs>
    <output name="review" value="\${steps.review.result}"/>
    <output name="hours" value="\${steps.window.result}"/>
  </outputs>
</directive>
\`\`\`
`;

let project: string;
beforeEach(async () => {
  project = await mkdtemp(join(tmpdir(), 'dirigent-tty-'));
  await writeFile(join(project, 'ask.md'), ASK);
  await writeFile(join(project, 'typed.md'), TYPED);
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

/**
 * Runs `command` in a pseudo-terminal, typing each answer once its prompt appears in what was
 * printed since the answer before.
 */
function inTerminalTyping(
  command: string,
  script: { prompt: string; answer: string }[],
): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: project });
    let output = '';
    let from = 0;
    let next = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const step = script[next];
      if (step !== undefined && output.indexOf(step.prompt, from) >= 0) {
        next++;
        from = output.length;
        child.stdin.write(`${step.answer}\n`);
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

  it('asks for each declared field of an answer as its type, again when it does not read, and continues the run with the typed answer', async () => {
    const { code, output } = await inTerminalTyping(`node ${CLI_MAIN} run typed.md`, [
      { prompt: 'approved (boolean, required) [y/n] > ', answer: 'maybe' },
      { prompt: 'approved (boolean, required) [y/n] > ', answer: 'y' },
      { prompt: 'days (integer, optional) > ', answer: '2.5' },
      { prompt: 'days (integer, optional) > ', answer: '3' },
      { prompt: 'note (string, optional) > ', answer: '' },
      { prompt: 'answer (number) > ', answer: '1.5' },
    ]);
    expect(output).toContain('Ship the release?');
    expect(output).toContain(
      'answer: an object with approved (boolean, required), days (integer) and note (string)',
    );
    expect(output).toContain('approved: Whether it ships');
    expect(output).toContain('"maybe" is not y or n.');
    expect(output).toContain('"2.5" is not a whole number.');
    expect(output).toContain('step "window" waits for signal "window".');
    expect(output).toContain('review: {"approved":true,"days":3}');
    expect(output).toContain('hours: 1.5');
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

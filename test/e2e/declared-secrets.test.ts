/**
 * A secret a directive declares (`<secrets><secret name="…"/>`) reaches the tool that needs it and
 * nothing else: the run record, the progress lines, error messages and the files of the run store
 * show `***`, in a run that completes and in one that fails.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDirective } from '../support/directive-file.js';
import { CLI_MAIN } from '../support/paths.js';

const SECRET = 'sk-live-5f1e2d3c4b5a69788796a5b4';
let project: string;

const SECRETS =
  '<metadata><secrets><secret name="API_TOKEN">the API key</secret></secrets></metadata>';

function cli(...args: string[]) {
  return spawnSync(process.execPath, [CLI_MAIN, ...args], {
    cwd: project,
    encoding: 'utf8',
    env: { ...process.env, API_TOKEN: SECRET, FORCE_COLOR: '0' },
  });
}

/** Every file under `dir`, as text. */
function allText(dir: string): string {
  let out = '';
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    out += statSync(path).isDirectory() ? allText(path) : readFileSync(path, 'utf8');
  }
  return out;
}

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'dirigent-secrets-'));
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

describe('a declared secret', () => {
  it('reaches the tool, and shows as *** in outputs, the record, progress lines and the run store', () => {
    const file = writeDirective(
      project,
      'uses_secret',
      `${SECRETS}
       <process>
         <step name="call">
           <execute item_type="tool" item_id="dirigent/shell/bash">
             <param name="command" value="printf '%s' '{env:API_TOKEN}' | sha256sum | cut -c1-16; echo 'sent {env:API_TOKEN}'"/>
           </execute>
           <assign name="said" value="\${result.stdout}"/>
         </step>
         <step name="show"><render>token is {env:API_TOKEN}</render></step>
       </process>
       <outputs>
         <output name="said">what the tool printed</output>
         <output name="shown" value="\${steps.show.result}"/>
       </outputs>`,
    );
    const human = cli('run', file);
    expect(human.status, human.stderr).toBe(0);
    const json = cli('run', file, '--json');
    expect(json.status, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).outputs).toEqual({
      // The tool had the real value (its hash), and what it printed of it is hidden.
      said: `${createHash('sha256').update(SECRET).digest('hex').slice(0, 16)}\nsent ***\n`,
      shown: 'token is ***',
    });
    for (const text of [human.stdout, human.stderr, json.stdout, json.stderr, allText(project)]) {
      expect(text).not.toContain(SECRET);
    }
  });

  it('shows as *** in the error of a failing step', () => {
    const file = writeDirective(
      project,
      'leaks_on_failure',
      `${SECRETS}
       <process>
         <step name="call">
           <execute item_type="tool" item_id="dirigent/shell/bash">
             <param name="command" value="echo 'bad token {env:API_TOKEN}' >&amp;2; exit 3"/>
           </execute>
           <retry attempts="1"/>
         </step>
       </process>`,
    );
    const human = cli('run', file);
    const json = cli('run', file, '--json');
    expect(json.status).toBe(1);
    const record = JSON.parse(json.stdout) as { error: { code: string; message: string } };
    expect(record.error.code).toBe('COMMAND_FAILED');
    expect(record.error.message).toContain('bad token ***');
    expect(human.stderr + human.stdout).toContain('bad token ***');
    for (const text of [human.stdout, human.stderr, json.stdout, json.stderr, allText(project)]) {
      expect(text).not.toContain(SECRET);
    }
  });

  it('is refused, naming how to declare it, when the directive reads it without declaring it', () => {
    const file = writeDirective(
      project,
      'undeclared',
      `<process><step name="s"><render>{env:API_TOKEN}</render></step></process>`,
    );
    const r = cli('validate', file);
    expect(r.status).toBe(2);
    expect(r.stdout + r.stderr).toContain('ENV_NOT_ALLOWED');
    expect(r.stdout + r.stderr).toContain('<secret name="API_TOKEN"/>');
  });
});

/**
 * The options commands share read alike everywhere: one flag and one help text per meaning, on
 * every command it applies to (every command is found from `dirigent --help`, so a new one must
 * say which it takes), and the names commands took before still work, out of the help.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { writeDirective } from '../support/directive-file.js';
import { CLI_MAIN } from '../support/paths.js';
import { redisForTest } from '../support/redis.js';

/** Commands that read or steer the runs of a deployment: they take `--redis` and `--prefix`. */
const ON_A_DEPLOYMENT = [
  'run',
  'signal',
  'cancel',
  'status',
  'runs',
  'runs export',
  'redrive',
  'rerun',
  'pause',
  'resume',
  'batch',
  'batch resume',
  'execute',
  'worker',
  'serve',
  'mcp',
  'schedule add',
  'schedule list',
  'schedule remove',
  'schedule sync',
  'emit',
];
/** Commands on the project's items or files alone: `--project`, and no deployment. */
const ON_THE_PROJECT = [
  'batch status',
  'search',
  'load',
  'sign',
  'keys init',
  'keys list',
  'keys trust',
  'keys revoke',
  'validate',
  'graph',
  'tool run',
  'tool create',
  'tool show',
  'tool test',
];

/** Each shared option (as its help shows its flags) and the commands it applies to. */
const SHARED: Record<string, string[]> = {
  '-p, --project <dir>': [...ON_A_DEPLOYMENT, ...ON_THE_PROJECT],
  '--redis <url>': ON_A_DEPLOYMENT,
  '--prefix <prefix>': ON_A_DEPLOYMENT,
  '--detach': ['run', 'execute', 'batch'],
  '--payload <json>': ['signal', 'execute'],
  '-i, --input <name=value>': ['run', 'rerun', 'schedule add'],
  '--inputs <json|@file>': ['run', 'rerun', 'schedule add'],
};

/** Former names, kept working: they never show in the help. */
const HIDDEN_ALIASES = ['--async', '--answer'];

interface Help {
  /** Each option's help text, by its flags, with commander's line breaks undone. */
  options: Map<string, string>;
  /** The names of the subcommands it lists. */
  commands: string[];
}

function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [CLI_MAIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, REDIS_URL: '', ...env },
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Reads `dirigent <path> --help`. */
function help(path: string[]): Help {
  const { code, stdout } = cli([...path, '--help']);
  expect(code, `dirigent ${path.join(' ')} --help`).toBe(0);
  const options = new Map<string, string>();
  const commands: string[] = [];
  let section = '';
  let last: string | undefined;
  for (const line of stdout.split('\n')) {
    if (/^\S.*:$/.test(line)) section = line;
    else if (line.trim() === '') last = undefined;
    else if (section === 'Options:') {
      const entry = /^ {2}(-\S.*?)(?: {2,}(.*))?$/.exec(line);
      if (entry) options.set((last = entry[1]!), entry[2] ?? '');
      else if (last !== undefined) options.set(last, `${options.get(last)} ${line.trim()}`);
    } else if (section === 'Commands:') {
      const name = /^ {2}(\S+)/.exec(line)?.[1];
      if (name !== undefined && name !== 'help') commands.push(name);
    }
  }
  return { options, commands };
}

/** Every command `dirigent --help` leads to, by path ("batch resume"), with its help. */
function everyCommand(path: string[] = [], found = new Map<string, Help>()): Map<string, Help> {
  const h = help(path);
  // A group that only holds subcommands (`tool`, `keys`) has no options of its own.
  const own = [...h.options.keys()].some((flags) => flags !== '-h, --help');
  if (path.length > 0 && own) found.set(path.join(' '), h);
  for (const name of h.commands) everyCommand([...path, name], found);
  return found;
}

describe('options shared by commands', () => {
  let commands: Map<string, Help>;
  beforeAll(() => {
    commands = everyCommand();
  }, 60_000);

  it('says, for every command, which shared options it takes', () => {
    expect([...commands.keys()].sort()).toEqual([...ON_A_DEPLOYMENT, ...ON_THE_PROJECT].sort());
  });

  it.each(Object.entries(SHARED))(
    'shows %s, with one help text, on every command it applies to and on no other',
    (flags, where) => {
      const texts = new Map<string, string[]>();
      for (const [command, h] of commands) {
        const text = h.options.get(flags);
        if (text === undefined) continue;
        texts.set(text, [...(texts.get(text) ?? []), command]);
      }
      expect([...texts.values()].flat().sort()).toEqual([...where].sort());
      expect([...texts.keys()], `${flags}: one text for ${where.join(', ')}`).toHaveLength(1);
    },
  );

  it('describes --redis as the deployment a command talks to, not as where it runs', () => {
    const [text] = [...commands.values()].map((h) => h.options.get('--redis <url>'));
    expect(text).toMatch(/deployment/);
    expect(text).not.toMatch(/run on/);
  });

  it('leaves the former names out of every help', () => {
    for (const [command, h] of commands)
      for (const flags of h.options.keys())
        for (const alias of HIDDEN_ALIASES) expect(flags, command).not.toContain(alias);
  });
});

describe('former names, kept as hidden aliases', () => {
  const redis = redisForTest();
  let project: string;

  beforeEach(() => {
    project = mkdtempSync(join(tmpdir(), 'dirigent-cli-options-'));
    const directives = join(project, '.ai', 'directives');
    mkdirSync(directives, { recursive: true });
    writeDirective(
      directives,
      'approve',
      `<inputs><input name="change" type="string" required="true">what ships</input></inputs>
      <process><step name="ask"><instruction>Ship {input:change}?</instruction></step>
      <step name="say"><render>answer: \${steps.ask.result}</render></step></process>
      <outputs><output name="said" expr="steps.say.result"/></outputs>`,
    );
  });
  afterEach(() => rmSync(project, { recursive: true, force: true }));

  /** `dirigent …args` on the project, embedded unless the arguments name a deployment. */
  const onProject = (...args: string[]) =>
    cli([...args, '--project', project], { DIRIGENT_USER_SPACE: join(project, 'user-space') });
  const onRedis = (...args: string[]) =>
    onProject(...args, '--redis', redis.url, '--prefix', redis.prefix);
  const record = (stdout: string) =>
    JSON.parse(stdout) as { runId: string; status: string; outputs: unknown };

  it.each(['--payload', '--answer'])('answers a waiting run with execute --run-id … %s', (flag) => {
    const waiting = onProject(
      'execute',
      'directive',
      'approve',
      '--params',
      '{"change": "v2"}',
      '--json',
    );
    expect(waiting.code, waiting.stderr).toBe(3);
    const { runId } = record(waiting.stdout);
    const done = onProject(
      'execute',
      'directive',
      'approve',
      '--run-id',
      runId,
      flag,
      '"yes"',
      '--json',
    );
    expect(done.code, done.stderr).toBe(0);
    expect(record(done.stdout)).toMatchObject({
      runId,
      status: 'completed',
      outputs: { said: 'answer: yes' },
    });
  });

  it.each(['--detach', '--async'])(
    'starts a run on Redis and returns without waiting with execute %s',
    (flag) => {
      // No worker serves this prefix: a command that waited would never return.
      const started = onRedis(
        'execute',
        'directive',
        'approve',
        '--params',
        '{"change": "v3"}',
        flag,
        '--json',
      );
      expect(started.code, started.stderr).toBe(1); // the run is queued: it has not ended
      const { runId, status } = record(started.stdout);
      expect(status).toBe('queued');
      const shown = onRedis('status', runId, '--json');
      expect(shown.code, shown.stderr).toBe(0);
      expect(record(shown.stdout)).toMatchObject({ runId, status: 'queued' });
    },
  );

  it('starts a run with run --detach and finds it under the same --prefix alone', () => {
    const started = onRedis('run', 'approve', '--input', 'change=v4', '--detach');
    expect(started.code, started.stderr).toBe(0);
    const runId = started.stdout.trim();
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(onRedis('status', runId, '--json').code).toBe(0);
    const elsewhere = onProject(
      'status',
      runId,
      '--json',
      '--redis',
      redis.url,
      '--prefix',
      `${redis.prefix}:other`,
    );
    expect(elsewhere.code).toBe(2);
    expect(JSON.parse(elsewhere.stdout)).toMatchObject({ error: { code: 'RUN_NOT_FOUND' } });
  });
});

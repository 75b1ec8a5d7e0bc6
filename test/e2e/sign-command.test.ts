/**
 * End to end: `dirigent keys` and `dirigent sign` in real processes (the compiled CLI), each test
 * with its own project, user space and key folder, so the real home is never touched. A signed
 * directive runs where signatures are required; the same directive edited afterwards is refused.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { readSigningKey } from '../../src/items/signing/signing-key.js';
import { signItem } from '../../src/items/signing/sign-item.js';
import { CLI_MAIN, DIRECTIVES } from '../support/paths.js';

let base: string;
let project: string;
let userSpace: string;
let keyDir: string;

// Each test spawns the CLI several times, about a second each on a loaded machine.
vi.setConfig({ testTimeout: 60_000 });

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'dirigent-sign-e2e-'));
  project = join(base, 'project');
  userSpace = join(base, 'user', '.ai');
  keyDir = join(base, 'keys');
  mkdirSync(project);
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in the test's project with its own user space and key folder. */
function cli(
  args: string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Result {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DIRIGENT_USER_SPACE: userSpace,
    DIRIGENT_SIGNING_KEY_DIR: keyDir,
    DIRIGENT_REQUIRE_SIGNATURES: '',
    NO_COLOR: '1',
    ...options.env,
  };
  // Runs stay in this process (no Redis deployment).
  delete env.REDIS_URL;
  const r = spawnSync(process.execPath, [CLI_MAIN, ...args, '--project', project], {
    cwd: project,
    encoding: 'utf8',
    env,
    ...(options.input !== undefined && { input: options.input }),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The one JSON document a `--json` command printed. */
function json(result: Result): Record<string, unknown> {
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

const REQUIRED = { DIRIGENT_REQUIRE_SIGNATURES: '1' };

function put(path: string, text: string): string {
  const file = join(project, '.ai', path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

/** The example directive `hello`, filed as item `examples/hello` (its category). */
function putHello(): string {
  return put('directives/examples/hello.md', readFileSync(join(DIRECTIVES, 'hello.md'), 'utf8'));
}

function keysInit(): { keyId: string; fingerprint: string; trustedKeyFile: string } {
  const r = cli(['keys', 'init', '--owner', 'ada', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return json(r) as { keyId: string; fingerprint: string; trustedKeyFile: string };
}

describe('keys init → sign → run', () => {
  it('runs the signed directive where signatures are required, and refuses it once edited', () => {
    const made = keysInit();
    expect(made.keyId).toMatch(/^[0-9a-f]{16}$/);
    expect(made.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(join(keyDir, 'private_key.pem')).mode & 0o777).toBe(0o600);
    expect(made.trustedKeyFile).toBe(join(userSpace, 'trusted_keys', `${made.keyId}.toml`));
    expect(existsSync(made.trustedKeyFile)).toBe(true);

    const file = putHello();
    const unsigned = cli(['run', 'examples/hello', '--json'], { env: REQUIRED });
    expect(unsigned.code).toBe(2);
    expect(json(unsigned).error).toMatchObject({ code: 'UNSIGNED_ITEM' });

    const signed = cli(['sign', 'directive', 'examples/hello', '--json']);
    expect(signed.code, signed.stderr).toBe(0);
    expect(json(signed)).toMatchObject({
      status: 'signed',
      itemId: 'examples/hello',
      file,
      space: 'project',
      signature: { keyId: made.keyId },
      warnings: [],
    });
    expect(readFileSync(file, 'utf8')).toMatch(
      new RegExp(`^<!-- rye:signed:\\S+:${made.keyId} -->\n# Hello\n`),
    );

    const ran = cli(['run', 'examples/hello', '--json'], { env: REQUIRED });
    expect(ran.code, ran.stderr).toBe(0);
    expect(json(ran)).toMatchObject({
      status: 'completed',
      outputs: { greeting: 'Hello, world!' },
      error: null,
    });

    writeFileSync(file, readFileSync(file, 'utf8').replace("echo 'Hello,", "echo 'Hallo,"));
    const tampered = cli(['run', 'examples/hello', '--json'], { env: REQUIRED });
    expect(tampered.code).toBe(2);
    expect(json(tampered)).toMatchObject({
      runId: null,
      status: 'invalid',
      steps: [],
      error: { code: 'INTEGRITY_FAILED' },
    });
    // A changed item is refused even where signatures are not required.
    const anyway = cli(['run', 'examples/hello']);
    expect(anyway.code).toBe(2);
    expect(anyway.stderr).toContain('was modified after it was signed');
    expect(anyway.stderr).toContain('[INTEGRITY_FAILED]');
    expect(anyway.stdout).not.toContain('Hallo');

    // Signing again after review makes it run.
    expect(cli(['sign', 'directive', 'examples/hello']).code).toBe(0);
    const again = cli(['run', 'examples/hello', '--json'], { env: REQUIRED });
    expect(again.code, again.stderr).toBe(0);
    expect(json(again)).toMatchObject({ outputs: { greeting: 'Hallo, world!' } });
  });

  it('refuses, where signatures are required, a RYE-signed directive whose steps after the fence its signature leaves out', async () => {
    keysInit();
    const file = put(
      'directives/examples/greet.md',
      [
        '# Greet',
        '',
        '```xml',
        '<directive name="greet" version="1.0.0">',
        '  <metadata><description>Greets.</description></metadata>',
        '</directive>',
        '```',
        '',
        '<process>',
        '  <step name="greet">',
        '    <execute item_type="tool" item_id="dirigent/shell/bash">',
        '      <param name="command" value="echo hello"/>',
        '    </execute>',
        '  </step>',
        '</process>',
        '',
      ].join('\n'),
    );
    // A `rye:signed` line, as RYE's older tooling writes it: its hash stops at </directive>.
    await signItem(file, 'directive', await readSigningKey(keyDir));
    writeFileSync(file, readFileSync(file, 'utf8').replace('echo hello', 'echo edited'));
    const refused = cli(['run', 'examples/greet', '--json'], { env: REQUIRED });
    expect(refused.code).toBe(2);
    expect(json(refused)).toMatchObject({
      status: 'invalid',
      error: { code: 'PARTIAL_SIGNATURE' },
    });
    expect(refused.stdout).not.toContain('edited');
    // Where signatures are not required it runs, with a warning naming the lines left out.
    const warned = cli(['run', 'examples/greet']);
    expect(warned.code, warned.stderr).toBe(0);
    expect(warned.stderr).toContain('does not cover the');

    // `dirigent sign` covers every byte after its line: the run is allowed again.
    expect(cli(['sign', 'directive', 'examples/greet']).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toMatch(/^<!-- ryeos:signed:/);
    const ran = cli(['run', 'examples/greet', '--json'], { env: REQUIRED });
    expect(ran.code, ran.stderr).toBe(0);
  });

  it('runs a signed tool on a system runtime where signatures are required (system items ship with Dirigent)', () => {
    keysInit();
    put(
      'tools/text/shout.yaml',
      'version: 1.0.0\ntool_type: yaml\nexecutor_id: rye/core/runtimes/bash_runtime\ndescription: Shout a word.\nconfig:\n  command: echo {word} | tr a-z A-Z\nconfig_schema:\n  type: object\n  properties: { word: { type: string } }\n  required: [word]\n',
    );
    const params = ['--params', '{"word": "hi"}'];
    const unsigned = cli(['execute', 'tool', 'text/shout', ...params], { env: REQUIRED });
    expect(unsigned.code).toBe(2);
    expect(unsigned.stderr).toContain('[UNSIGNED_ITEM]');
    expect(cli(['sign', 'tool', 'text/shout']).code).toBe(0);
    const ran = cli(['execute', 'tool', 'text/shout', ...params], { env: REQUIRED });
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ stdout: 'HI\n' });
  });

  it('runs an unsigned directive with a warning where signatures are not required', () => {
    const file = putHello();
    const ran = cli(['run', 'examples/hello']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toContain(`warning: ${file} is not signed.`);
    // --json keeps standard error for errors only.
    expect(cli(['run', 'examples/hello', '--json']).stderr).toBe('');
  });

  it("requires signatures from the project's require_signatures: true", () => {
    keysInit();
    putHello();
    put('config/dirigent.yaml', 'require_signatures: true\n');
    const unsigned = cli(['run', 'examples/hello']);
    expect(unsigned.code).toBe(2);
    expect(unsigned.stderr).toContain('[UNSIGNED_ITEM]');
    expect(unsigned.stderr).toContain('dirigent sign directive <item_id>');

    expect(cli(['sign', 'directive', 'examples/hello']).code).toBe(0);
    expect(cli(['run', 'examples/hello']).code).toBe(0);
  });

  it('refuses a directive signed by a key no longer trusted, where signatures are required', () => {
    const made = keysInit();
    putHello();
    expect(cli(['sign', 'directive', 'examples/hello']).code).toBe(0);
    const revoked = cli(['keys', 'revoke', made.keyId.slice(0, 8), '--json']);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(json(revoked)).toMatchObject({ removed: [made.trustedKeyFile], remaining: [] });

    const refused = cli(['run', 'examples/hello', '--json'], { env: REQUIRED });
    expect(refused.code).toBe(2);
    expect(json(refused).error).toMatchObject({ code: 'UNTRUSTED_KEY' });
    // Not required: it runs (the key is reported as untrusted).
    expect(cli(['run', 'examples/hello']).code).toBe(0);
  });
});

const NOTE = (title: string) => `---\ndescription: About ${title}\n---\n# ${title}\n`;

describe('dirigent sign', () => {
  it('signs every item a glob matches and exits 1 when one does not validate', () => {
    keysInit();
    const a = put('knowledge/notes/a.md', NOTE('A'));
    const bad = '---\ndescription: A\nversion: banana\n---\nBody\n';
    const b = put('knowledge/notes/b.md', bad);
    const c = put('knowledge/notes/c.md', NOTE('C'));

    const text = cli(['sign', 'knowledge', 'notes/*']);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('signed  notes/a\n');
    expect(text.stdout).toContain('failed  notes/b: not valid\n');
    expect(text.stdout).toContain('line 3: Its version "banana" is not a semantic version.');
    expect(text.stdout).toContain('signed  notes/c\n');
    expect(text.stdout).toContain('Signed 2/3 knowledge items.');
    expect(readFileSync(b, 'utf8')).toBe(bad);
    // Their `---` front matter is signed too: RYE's current line format covers it.
    for (const file of [a, c]) expect(readFileSync(file, 'utf8')).toMatch(/^<!-- ryeos:signed:/);

    const batch = cli(['sign', 'knowledge', 'notes/*', '--json']);
    expect(batch.code).toBe(1);
    expect(json(batch)).toMatchObject({
      status: 'completed',
      signed: ['notes/a', 'notes/c'],
      failed: [{ itemId: 'notes/b', error: { code: 'INVALID_ITEM' } }],
      total: 3,
    });
    // Signing again replaced the lines instead of adding more.
    expect(readFileSync(a, 'utf8').match(/rye(?:os)?:signed/g)).toHaveLength(1);
  });

  it('exits 0 when every match is signed, in the user space when asked', () => {
    keysInit();
    const mine = join(userSpace, 'knowledge', 'mine', 'a.md');
    mkdirSync(dirname(mine), { recursive: true });
    writeFileSync(mine, NOTE('Mine'));
    const r = cli(['sign', 'knowledge', 'mine/*', '--space', 'user', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ signed: ['mine/a'], failed: [], total: 1 });
    expect(readFileSync(mine, 'utf8')).toMatch(/^<!-- ryeos:signed:/);
  });

  it('exits 1 for one item that does not validate, with the issue located', () => {
    keysInit();
    const file = put('knowledge/notes/b.md', '---\ndescription: A\nversion: banana\n---\nBody\n');
    const r = cli(['sign', 'knowledge', 'notes/b']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${file}:3:1: error: Its version "banana" is not a semantic version.`,
    );
    const j = cli(['sign', 'knowledge', 'notes/b', '--json']);
    expect(j.code).toBe(1);
    expect(json(j)).toMatchObject({
      ok: false,
      error: { code: 'INVALID_ITEM', details: { issues: [{ location: { line: 3 } }] } },
    });
  });

  it.each([
    [['sign', 'knowledge', 'notes/none'], 'UNKNOWN_KNOWLEDGE', 'in the project space'],
    [['sign', 'tool', 'nothing*'], 'UNKNOWN_TOOL', 'No tool in the project space matches'],
    [
      ['sign', 'tool', 'rye/core/runtimes/bash/bash', '--space', 'system'],
      'SPACE_READ_ONLY',
      'read-only',
    ],
    [['sign', 'widget', 'x'], 'INVALID_REQUEST', 'is not an item type'],
  ])('exits 2 for a wrong call: %j', (args, code, words) => {
    keysInit();
    const text = cli(args);
    expect(text.code).toBe(2);
    expect(text.stderr).toContain(`[${code}]`);
    expect(text.stderr).toContain(words);
    const j = cli([...args, '--json']);
    expect(j.code).toBe(2);
    expect(json(j)).toMatchObject({ ok: false, error: { code } });
  });

  it('points a system item to load --to project', () => {
    keysInit();
    const inProject = cli(['sign', 'tool', 'rye/core/runtimes/bash/bash']);
    expect(inProject.code).toBe(2);
    expect(inProject.stderr).toContain('[UNKNOWN_TOOL]');
    expect(inProject.stderr).toContain(
      'dirigent load tool rye/core/runtimes/bash/bash --to project',
    );
    const inSystem = cli(['sign', 'tool', 'rye/core/runtimes/bash/bash', '--space', 'system']);
    expect(inSystem.stderr).toContain(
      'dirigent load tool rye/core/runtimes/bash/bash --to project',
    );
  });

  it('exits 2 without a signing key, and says how to make one', () => {
    putHello();
    const r = cli(['sign', 'directive', 'examples/hello', '--json']);
    expect(r.code).toBe(2);
    expect(json(r)).toMatchObject({
      ok: false,
      error: { code: 'NO_SIGNING_KEY', hint: expect.stringContaining('dirigent keys init') },
    });
  });

  it('refuses a private key others can read, with a chmod 600 hint, and signs nothing', () => {
    keysInit();
    const file = putHello();
    const before = readFileSync(file, 'utf8');
    const privateKey = join(keyDir, 'private_key.pem');
    chmodSync(privateKey, 0o644);
    const r = cli(['sign', 'directive', 'examples/hello']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is accessible by other users (mode 0644)');
    expect(r.stderr).toContain(`chmod 600 ${privateKey}`);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});

describe('dirigent keys', () => {
  it('trusts a PEM file and a TOML on standard input, lists every space, revokes by prefix', () => {
    const own = keysInit();
    // A colleague's key, made in another folder.
    const theirs = join(base, 'theirs');
    const made = cli(['keys', 'init', '--owner', 'bob', '--json'], {
      env: { DIRIGENT_SIGNING_KEY_DIR: theirs, DIRIGENT_USER_SPACE: join(base, 'bob', '.ai') },
    });
    expect(made.code, made.stderr).toBe(0);
    const bob = json(made) as { keyId: string; fingerprint: string; trustedKeyFile: string };

    const trusted = cli([
      'keys',
      'trust',
      join(theirs, 'public_key.pem'),
      '--owner',
      'bob',
      '--space',
      'project',
      '--json',
    ]);
    expect(trusted.code, trusted.stderr).toBe(0);
    const projectFile = join(project, '.ai', 'trusted_keys', `${bob.keyId}.toml`);
    expect(json(trusted)).toEqual({
      keyId: bob.keyId,
      fingerprint: bob.fingerprint,
      owner: 'bob',
      file: projectFile,
      space: 'project',
    });

    // RYE's trusted-key TOML, on standard input, into the user space (the default).
    const toml = readFileSync(bob.trustedKeyFile, 'utf8');
    const piped = cli(['keys', 'trust', '-', '--json'], { input: toml });
    expect(piped.code, piped.stderr).toBe(0);
    expect(json(piped)).toMatchObject({ keyId: bob.keyId, owner: 'bob', space: 'user' });

    const listed = cli(['keys', 'list', '--json']);
    expect(listed.code).toBe(0);
    const listing = json(listed) as {
      signingKey: { keyId: string; dir: string };
      trusted: { keyId: string; owner: string; space: string; status: string }[];
    };
    expect(listing.signingKey).toEqual({ keyId: own.keyId, dir: keyDir });
    const rows = listing.trusted.map((k) => [k.space, k.keyId, k.owner, k.status]);
    expect(rows).toContainEqual(['project', bob.keyId, 'bob', 'trusted']);
    expect(rows).toContainEqual(['user', bob.keyId, 'bob', 'trusted']);
    expect(rows).toContainEqual(['user', own.keyId, 'ada', 'trusted']);

    const text = cli(['keys', 'list']);
    expect(text.stdout).toContain(`Signing key: ${own.keyId} (${keyDir})`);
    expect(text.stdout).toContain(projectFile);

    const revoked = cli(['keys', 'revoke', bob.fingerprint.slice(0, 10)]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`Revoked key ${bob.keyId} (${bob.fingerprint}):`);
    expect(revoked.stdout).toContain(`removed ${projectFile}`);
    const after = json(cli(['keys', 'list', '--json'])) as typeof listing;
    expect(after.trusted.map((k) => k.keyId)).toEqual([own.keyId]);
  });

  it('exits 2 for a key that exists already, a private key to trust, and a short prefix', () => {
    keysInit();
    const again = cli(['keys', 'init', '--json']);
    expect(again.code).toBe(2);
    expect(json(again)).toMatchObject({ ok: false, error: { code: 'ITEM_EXISTS' } });

    const secret = cli(['keys', 'trust', join(keyDir, 'private_key.pem')]);
    expect(secret.code).toBe(2);
    expect(secret.stderr).toContain('This is a private key.');

    const short = cli(['keys', 'revoke', 'abc']);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('[INVALID_REQUEST]');
  });

  it('reports an unusable signing key in the listing instead of failing', () => {
    keysInit();
    chmodSync(join(keyDir, 'private_key.pem'), 0o640);
    const r = cli(['keys', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Signing key: none usable in');
    expect(r.stdout).toContain('chmod 600');
  });
});

/**
 * Signatures on use: every link of a tool's chain and every directive file is verified before it
 * runs. A tampered item is always refused; unsigned items and untrusted keys only when the project
 * requires signatures.
 */
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectiveLoader } from '../../../src/engine/directive-loader.js';
import { ItemResolver } from '../../../src/items/item-resolver.js';
import { generateSigningKey, signItem, writeTrustedKey } from '../../../src/items/signing/index.js';
import { SYSTEM_SPACE_ROOT, type Space } from '../../../src/items/space.js';
import { ItemDispatcher } from '../../../src/tools/item-dispatcher.js';
import { caller, rejection } from '../tools/helpers.js';

let base: string;
let project: string;
let resolver: ItemResolver;
const key = generateSigningKey();
const stranger = generateSigningKey();

const TOOL = `version: 1.0.0
tool_type: yaml
executor_id: rye/core/primitives/subprocess
description: prints ok
config:
  command: /bin/echo
  args: ['{"ok": true}']
`;

function put(path: string, text: string): string {
  const file = join(project, '.ai', 'tools', path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  resolver.invalidate();
  return file;
}

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'dirigent-signed-'));
  project = join(base, 'project');
  // The system space is signed by its own key here, as a release would be.
  cpSync(SYSTEM_SPACE_ROOT, join(base, 'system', '.ai'), { recursive: true });
  const spaces: Space[] = [
    { name: 'project', root: join(project, '.ai') },
    { name: 'system', root: join(base, 'system', '.ai') },
  ];
  resolver = new ItemResolver(spaces);
  for (const id of ['rye/core/primitives/subprocess']) {
    await signItem(join(base, 'system', '.ai', 'tools', `${id}.yaml`), 'tool', key);
  }
  await writeTrustedKey(join(project, '.ai'), key.publicKeyPem, 'tests');
});

afterAll(() => {
  resolver.close();
  rmSync(base, { recursive: true, force: true });
});

const run = (dispatcher: ItemDispatcher, itemId: string) =>
  caller(
    () => dispatcher,
    () => project,
  )(itemId);

describe('signed tools', () => {
  it('runs a signed tool, and refuses it once a byte changed, whatever the policy', async () => {
    const file = put('signed.yaml', TOOL);
    await signItem(file, 'tool', key);
    const lax = new ItemDispatcher(resolver, { requireSignatures: false });
    await expect(run(lax, 'signed')).resolves.toEqual({ ok: true });
    appendFileSync(file, '# an edit\n');
    const err = await rejection(run(lax, 'signed'));
    expect(err).toMatchObject({ code: 'INTEGRITY_FAILED', retryable: false });
    expect(err.location?.file).toBe(file);
  });

  it('refuses unsigned items and unknown keys only when signatures are required', async () => {
    put('unsigned.yaml', TOOL);
    const strangers = put('stranger.yaml', TOOL);
    await signItem(strangers, 'tool', stranger);
    const lax = new ItemDispatcher(resolver, { requireSignatures: false });
    const strict = new ItemDispatcher(resolver, { requireSignatures: true });
    await expect(run(lax, 'unsigned')).resolves.toEqual({ ok: true });
    await expect(run(lax, 'stranger')).resolves.toEqual({ ok: true });
    expect((await rejection(run(strict, 'unsigned'))).code).toBe('UNSIGNED_ITEM');
    expect((await rejection(run(strict, 'stranger'))).code).toBe('UNTRUSTED_KEY');
  });

  it('verifies every link of the chain: an unsigned runtime refuses a signed tool under the strict policy', async () => {
    put(
      'team/runtime.yaml',
      'tool_type: runtime\nexecutor_id: rye/core/primitives/subprocess\ndescription: r\nconfig:\n  command: /bin/echo\n',
    );
    const file = put(
      'via-runtime.yaml',
      'tool_type: yaml\nexecutor_id: team/runtime\ndescription: t\n',
    );
    await signItem(file, 'tool', key);
    const strict = new ItemDispatcher(resolver, { requireSignatures: true });
    const err = await rejection(run(strict, 'via-runtime'));
    expect(err.code).toBe('UNSIGNED_ITEM');
    expect(err.message).toContain('runtime.yaml');
  });
});

describe('signed directives', () => {
  it('refuses a directive changed after signing', async () => {
    const file = join(project, 'hello.md');
    writeFileSync(
      file,
      '# Hello\n\n```xml\n<directive name="hello" version="1.0.0"><process><step name="a"><execute item_type="tool" item_id="dirigent/util/echo"><param name="message" value="hi"/></execute></step></process></directive>\n```\n',
    );
    await signItem(file, 'directive', key);
    const loader = new DirectiveLoader(project, false);
    await expect(loader.loadFile(file)).resolves.toMatchObject({ itemId: 'hello' });
    writeFileSync(file, readFileSync(file, 'utf8').replace('value="hi"', 'value="pwned"'));
    expect((await rejection(loader.loadFile(file))).code).toBe('INTEGRITY_FAILED');
    loader.items.close();
  });
});

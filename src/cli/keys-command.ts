import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import {
  initSigningKey,
  listTrustedKeys,
  readSigningKey,
  revokeKey,
  signingKeyDir,
  trustKey,
} from '../items/signing/key-ring.js';
import { defaultSpaces, type Space } from '../items/space.js';
import { parseSpaceName } from './item-arguments.js';
import { reportToolError } from './tool-command.js';
import { cannotRead } from '../errors/file-errors.js';

/** Options every `dirigent keys` command takes. */
export interface KeysOptions {
  project: string;
  json?: boolean;
}

/**
 * `dirigent keys init [--owner name] [--force]`: makes the signing key (`signingKeyDir`) and
 * trusts it in the user space. Exit 0, or 2 (a key exists already, without `--force`).
 */
export async function keysInitCommand(
  opts: KeysOptions & { owner?: string; force?: boolean },
): Promise<number> {
  return run(opts, async () => {
    const projectDir = resolve(opts.project);
    const made = await initSigningKey(signingKeyDir(projectDir), {
      owner: opts.owner ?? defaultOwner(),
      trustIn: defaultSpaces(projectDir)[1]!.root,
      force: opts.force === true,
    });
    return {
      json: made,
      text:
        `Signing key ${made.keyId} in ${made.dir}\n` +
        `  private key: ${made.privateKeyFile} (mode 0600)\n` +
        `  public key:  ${made.publicKeyFile}\n` +
        `Trusted in the user space: ${made.trustedKeyFile}\n` +
        'Sign an item with: dirigent sign <item_type> <item_id>\n',
    };
  });
}

/**
 * `dirigent keys list [--json]`: the signing key, and every trusted-key file of the project,
 * user and system spaces (skipped ones with the reason). Exit 0.
 */
export async function keysListCommand(opts: KeysOptions): Promise<number> {
  return run(opts, async () => {
    const projectDir = resolve(opts.project);
    const dir = signingKeyDir(projectDir);
    const own = await readSigningKey(dir).then(
      (key) => ({ keyId: key.keyId, dir }),
      (err: unknown) => {
        const e = DirigentError.from(err);
        return { dir, error: e.message, ...(e.hint !== undefined && { hint: e.hint }) };
      },
    );
    const trusted = await listTrustedKeys(defaultSpaces(projectDir));
    const lines = trusted.map((k) =>
      k.status === 'trusted'
        ? `${k.keyId.padEnd(16)}  ${(k.owner || '-').padEnd(12)}  ${k.space.padEnd(7)}  ${k.file}\n`
        : `${k.keyId.padEnd(16)}  skipped       ${k.space.padEnd(7)}  ${k.file}: ${k.reason}\n`,
    );
    const head =
      'keyId' in own
        ? `Signing key: ${own.keyId} (${own.dir})\n`
        : `Signing key: none usable in ${own.dir} (${own.error})\n` +
          (own.hint === undefined ? '' : `  hint: ${own.hint}\n`);
    return {
      json: { signingKey: own, trusted },
      text: `${head}${lines.length > 0 ? `Trusted keys:\n${lines.join('')}` : 'No trusted keys.\n'}`,
    };
  });
}

/**
 * `dirigent keys trust <file.pem|file.toml|-> [--owner name] [--space project|user]`: trusts a
 * public key (PEM, or RYE's trusted-key TOML; `-` reads standard input) in the user space (default)
 * or the project's. Exit 0, or 2 when the file holds no Ed25519 public key.
 */
export async function keysTrustCommand(
  source: string,
  opts: KeysOptions & { owner?: string; space?: string },
): Promise<number> {
  return run(opts, async () => {
    const projectDir = resolve(opts.project);
    const name = parseSpaceName(opts.space ?? 'user', ['project', 'user']);
    const space = defaultSpaces(projectDir).find((s) => s.name === name)!;
    const text = source === '-' ? await readStdin() : await readKeyFile(source);
    const written = await trustKey(space.root, text, opts.owner);
    return {
      json: { ...written, space: name },
      text:
        `Trusted key ${written.keyId} (owner ${written.owner}) in the ${name} space: ${written.file}\n` +
        `  fingerprint ${written.fingerprint}\n`,
    };
  });
}

/**
 * `dirigent keys revoke <keyId> [--space project|user]`: removes the key's trusted-key files from
 * that space, or from the project and user spaces. Exit 0, or 2 (no such key, or only the
 * read-only system space trusts it).
 */
export async function keysRevokeCommand(
  keyId: string,
  opts: KeysOptions & { space?: string },
): Promise<number> {
  return run(opts, async () => {
    const spaces = defaultSpaces(resolve(opts.project));
    let target: Space[] = spaces;
    if (opts.space !== undefined) {
      const name = parseSpaceName(opts.space, ['project', 'user']);
      target = spaces.filter((s) => s.name === name);
    }
    const revoked = await revokeKey(target, keyId);
    const left = revoked.remaining
      .map((r) => `  still trusted by the ${r.space} space (read-only): ${r.file}\n`)
      .join('');
    return {
      json: revoked,
      text:
        `Revoked key ${revoked.fingerprints.rye} (${revoked.fingerprints.ryeos}):\n` +
        revoked.removed.map((f) => `  removed ${f}\n`).join('') +
        left,
    };
  });
}

/** Runs a keys command: prints its outcome (JSON or text), or its error as the other commands do. */
async function run(
  opts: KeysOptions,
  body: () => Promise<{ json: unknown; text: string }>,
): Promise<number> {
  try {
    const out = await body();
    process.stdout.write(opts.json ? `${JSON.stringify(out.json)}\n` : out.text);
    return 0;
  } catch (err) {
    const e = reportToolError(err, opts);
    return e.code === ErrorCode.INTERNAL ? 1 : 2;
  }
}

function defaultOwner(): string {
  try {
    return userInfo().username || 'local';
  } catch {
    return 'local';
  }
}

async function readKeyFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw cannotRead(file, err, {
      hint: 'Give the public key file (public_key.pem, or a trusted-key .toml), or - for standard input.',
    });
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { createTool } from '../items/create-tool.js';
import { ItemResolver } from '../items/item-resolver.js';
import { defaultSpaces, type SpaceName } from '../items/space.js';
import { reportToolError } from './tool-command.js';
import { cannotRead } from '../errors/file-errors.js';

/** Options of `dirigent tool create`. */
export interface ToolCreateOptions {
  file?: string;
  code?: string;
  ext?: string;
  space: string;
  force?: boolean;
  project: string;
  json?: boolean;
}

/**
 * `dirigent tool create <item_id> (--file <path> | --code <source> [--ext .py])`: validates the
 * source, writes it into the space and registers it in `enabled.json`. Exit 0 created, 2 refused.
 */
export async function toolCreateCommand(itemId: string, opts: ToolCreateOptions): Promise<number> {
  const resolver = new ItemResolver(defaultSpaces(resolve(opts.project)));
  try {
    if ((opts.file === undefined) === (opts.code === undefined)) {
      throw DirigentError.fatal(
        ErrorCode.INVALID_TOOL,
        'Give the source with either --file <path> or --code <source>.',
        {
          hint: 'e.g. dirigent tool create text/shout --file ./shout.py',
        },
      );
    }
    const source = opts.file !== undefined ? await readSource(opts.file) : opts.code!;
    const ext = opts.ext ?? (opts.file !== undefined ? extname(opts.file) : '.py');
    const created = await createTool(resolver, {
      itemId,
      source,
      extension: ext.startsWith('.') ? ext : `.${ext}`,
      space: opts.space as SpaceName,
      force: opts.force === true,
      projectDir: resolve(opts.project),
    });
    const chain = created.chain.map((l) => l.itemId).join(' → ');
    process.stdout.write(
      opts.json
        ? `${JSON.stringify({ ok: true, itemId, file: created.file, space: created.space, sha256: created.sha256, chain: created.chain.map((l) => ({ itemId: l.itemId, space: l.space })) })}\n`
        : `Created ${itemId} in the ${created.space} space: ${created.file}\nChain: ${chain}\nRegistered in enabled.json; run it with: dirigent tool run ${itemId} --params '{…}'\n`,
    );
    return 0;
  } catch (err) {
    reportToolError(err, opts);
    return 2;
  } finally {
    resolver.close();
  }
}

async function readSource(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw cannotRead(file, err, { hint: 'Check the path given to --file.' });
  }
}

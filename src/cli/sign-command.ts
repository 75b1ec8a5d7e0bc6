import { ErrorCode } from '../errors/error-codes.js';
import { parseItemKind, parseSpaceName } from './item-arguments.js';
import type { SignedBatch, SignedItem } from '../items/sign-items.js';
import { withProjectItems } from './run-command.js';
import { reportToolError } from './tool-command.js';

/** Options of `dirigent sign`. */
export interface SignCommandOptions {
  /** `project` (default) or `user`. */
  space?: string;
  project: string;
  json?: boolean;
}

/**
 * `dirigent sign <item_type> <item_id|glob> [--space project|user]`: validates and signs the item
 * (or each item the glob matches) with the user's signing key (`signingKeyDir`). Exit 0 when
 * everything was signed, 1 when an item failed validation (a glob signs the others), 2 when the
 * call itself is wrong (unknown item, no signing key, the system space).
 */
export async function signCommand(
  itemType: string,
  itemId: string,
  opts: SignCommandOptions,
): Promise<number> {
  // Signing reads and writes the project's items alone: no deployment is opened for it.
  return withProjectItems(opts, async (dirigent) => {
    try {
      const kind = parseItemKind(itemType);
      const space = parseSpaceName(opts.space ?? 'project', ['project', 'user', 'system']);
      const result = await dirigent.items.sign({ kind, itemId, space });
      if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
      else
        process.stdout.write(
          result.status === 'signed' ? describeOne(result) : describeBatch(result, kind),
        );
      return result.status === 'completed' && result.failed.length > 0 ? 1 : 0;
    } catch (err) {
      const e = reportToolError(err, opts);
      return e.code === ErrorCode.INVALID_ITEM || e.code === ErrorCode.INTERNAL ? 1 : 2;
    }
  });
}

function describeOne(item: SignedItem): string {
  const { keyId, timestamp, hash, format } = item.signature;
  const warnings = item.warnings.map((w) => `  warning: ${w}\n`).join('');
  return (
    `Signed ${item.itemId} in the ${item.space} space: ${item.file}\n` +
    `  ${format}:signed by key ${keyId}, ${timestamp}, hash ${hash.slice(0, 12)}…\n${warnings}`
  );
}

function describeBatch(batch: SignedBatch, kind: string): string {
  const lines = batch.items.map(
    (item) => `signed  ${item.itemId}\n${item.warnings.map((w) => `  warning: ${w}\n`).join('')}`,
  );
  for (const failed of batch.failed) {
    const issues = failed.issues?.map((i) => {
      const where = i.location ? `line ${i.location.line}: ` : '';
      return `  ${where}${i.message}${i.hint ? `\n    hint: ${i.hint}` : ''}\n`;
    });
    lines.push(
      `failed  ${failed.itemId}: ${issues ? 'not valid' : `${failed.error.message} [${failed.error.code}]`}\n` +
        (issues?.join('') ?? (failed.error.hint ? `  hint: ${failed.error.hint}\n` : '')),
    );
  }
  const noun =
    batch.total === 1 ? kind : `${kind === 'knowledge' ? 'knowledge items' : `${kind}s`}`;
  lines.push(`Signed ${batch.signed.length}/${batch.total} ${noun}.\n`);
  return lines.join('');
}

/**
 * The executor chain as data (RYE §4.1, §4.3): a tool names its runtime (`executor_id`), a
 * runtime names the next, and the chain ends at a primitive (`executor_id: null`). Chains have at
 * most {@link MAX_CHAIN_LENGTH} links, never revisit an item, and never resolve upward: a link
 * finds its executor in its own space or a lower one, so a system tool can never be taken over by
 * a project's or a user's runtime.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { ItemResolver, Resolution } from '../items/item-resolver.js';
import { spacesBelow } from '../items/space.js';
import type { ChainLink, ToolItem } from '../items/tool-item.js';
import { ignoreCode } from '../errors/ignore-expected.js';

/** RYE's `MAX_CHAIN_DEPTH`. */
export const MAX_CHAIN_LENGTH = 10;

/** Reads a resolved file into a {@link ToolItem}. */
export type ToolItemReader = (resolution: Resolution) => Promise<ToolItem>;

/**
 * The chain of `itemId`, tool first and primitive last. Throws `UNKNOWN_TOOL` for the tool itself,
 * and `EXECUTOR_NOT_FOUND`, `CHAIN_UPWARD`, `CHAIN_CYCLE` or `CHAIN_TOO_DEEP` for a broken chain,
 * naming every link so far.
 */
export async function buildChain(
  resolver: ItemResolver,
  itemId: string,
  read: ToolItemReader,
): Promise<ChainLink[]> {
  const first = await resolver.resolve('tool', itemId);
  const links: ChainLink[] = [
    { itemId, file: first.file, space: first.space, item: await read(first) },
  ];
  for (;;) {
    const link = links[links.length - 1]!;
    const next = link.item.executorId;
    if (next === null) return links;
    const path = () => [...links.map((l) => l.itemId), next].join(' → ');
    if (links.some((l) => l.itemId === next)) {
      throw chainError(
        ErrorCode.CHAIN_CYCLE,
        `The executor chain of "${itemId}" loops: ${path()}.`,
        link,
        'Point executor_id at a runtime that does not lead back to this item.',
      );
    }
    if (links.length >= MAX_CHAIN_LENGTH) {
      throw chainError(
        ErrorCode.CHAIN_TOO_DEEP,
        `The executor chain of "${itemId}" is longer than ${MAX_CHAIN_LENGTH} links: ${path()}.`,
        link,
        'Shorten the chain: a runtime should reach a primitive in a few links.',
      );
    }
    const resolution = await resolveExecutor(resolver, next, link, path);
    links.push({
      itemId: next,
      file: resolution.file,
      space: resolution.space,
      item: await read(resolution),
    });
  }
}

async function resolveExecutor(
  resolver: ItemResolver,
  executorId: string,
  link: ChainLink,
  path: () => string,
): Promise<Resolution> {
  try {
    return await resolver.resolve('tool', executorId, spacesBelow(resolver.spaces, link.space));
  } catch (err) {
    const e = DirigentError.from(err);
    if (e.code !== ErrorCode.UNKNOWN_TOOL) throw err;
    const above = await resolver
      .resolve('tool', executorId)
      .catch(ignoreCode(ErrorCode.UNKNOWN_TOOL));
    if (above !== undefined) {
      throw chainError(
        ErrorCode.CHAIN_UPWARD,
        `"${link.itemId}" (${link.space} space) names runtime "${executorId}", which exists only in the ${above.space} space (${above.file}); a link never resolves upward.`,
        link,
        `Put the runtime in the ${link.space} space or below, or move "${link.itemId}" up to the ${above.space} space.`,
      );
    }
    throw chainError(
      ErrorCode.EXECUTOR_NOT_FOUND,
      `Runtime "${executorId}" named by "${link.itemId}" is in no space (chain: ${path()}).`,
      link,
      `Check executor_id in ${link.file}; ${e.hint ?? ''}`.trim(),
    );
  }
}

function chainError(
  code: ErrorCode,
  message: string,
  link: ChainLink,
  hint: string,
): DirigentError {
  return DirigentError.fatal(code, message, {
    location: { file: link.file, line: 1, column: 1 },
    hint,
    details: { itemId: link.itemId, space: link.space },
  });
}

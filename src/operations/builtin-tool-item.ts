import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { BUILTIN_TOOLS } from '../tools/builtin/index.js';
import { RYE_ALIAS_TOOLS } from '../tools/rye-alias-tools.js';
import type { LoadedItem, LoadRequest } from './load-item.js';

/**
 * A tool built into Dirigent (or RYE's name of one), as `load` answers for it when no space holds
 * a file of that id (`error`, what loading the file threw, is `UNKNOWN_TOOL`): its description and
 * parameter schema as JSON, from the system space. Undefined when `request` is not for a built-in
 * tool (or names the project or user space). Copying one is `INVALID_REQUEST`: it has no file.
 */
export function builtinToolItem(request: LoadRequest, error: unknown): LoadedItem | undefined {
  const builtin =
    request.kind === 'tool' && request.source !== 'project' && request.source !== 'user'
      ? [...BUILTIN_TOOLS, ...RYE_ALIAS_TOOLS].find((t) => t.itemId === request.itemId)
      : undefined;
  if (builtin === undefined || DirigentError.from(error).code !== ErrorCode.UNKNOWN_TOOL)
    return undefined;
  if (request.destination !== undefined && request.destination !== 'system')
    throw DirigentError.fatal(
      ErrorCode.INVALID_REQUEST,
      `Tool "${builtin.itemId}" is built into Dirigent: it has no file to copy.`,
      { hint: 'Write a tool of your own under .ai/tools/ with the same item id to shadow it.' },
    );
  const slash = builtin.itemId.lastIndexOf('/');
  return {
    kind: 'tool',
    itemId: builtin.itemId,
    space: 'system',
    file: '',
    content: `${JSON.stringify({ item_id: builtin.itemId, description: builtin.description, parameters: builtin.paramsSchema }, null, 2)}\n`,
    metadata: {
      name: builtin.itemId.slice(slash + 1),
      description: builtin.description,
      category: builtin.itemId.slice(0, slash),
      type: 'builtin',
      tags: [],
    },
    signature: { status: 'unsigned' },
    warnings: [],
  };
}

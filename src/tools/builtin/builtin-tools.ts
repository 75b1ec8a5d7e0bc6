/** The built-in tools, in the order the docs list them. */
import type { ToolDefinition } from '../tool-definition.js';
import { bashTool } from './bash.js';
import { echoTool } from './echo.js';
import { fsEditTool } from './fs-edit.js';
import { fsGlobTool } from './fs-glob.js';
import { fsGrepTool } from './fs-grep.js';
import { fsLsTool } from './fs-ls.js';
import { fsReadTool } from './fs-read.js';
import { fsWriteTool } from './fs-write.js';
import { httpFetchTool } from './http-fetch.js';
import { sleepTool } from './sleep.js';
import { webFetchTool } from './web-fetch.js';

/** Every built-in system tool; the default tool set of a {@link BuiltinDispatcher}. */
export const BUILTIN_TOOLS: ToolDefinition[] = [
  echoTool,
  sleepTool,
  bashTool,
  fsReadTool,
  fsWriteTool,
  fsLsTool,
  fsGlobTool,
  fsGrepTool,
  fsEditTool,
  httpFetchTool,
  webFetchTool,
];

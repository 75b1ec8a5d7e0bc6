import type { ToolDefinition } from '../tool-definition.js';
import { bashTool } from './bash.js';
import { echoTool } from './echo.js';
import { fsReadTool } from './fs-read.js';
import { fsWriteTool } from './fs-write.js';
import { sleepTool } from './sleep.js';

export { bashTool, echoTool, fsReadTool, fsWriteTool, sleepTool };

/** Every built-in system tool; the default tool set of a {@link BuiltinDispatcher}. */
export const BUILTIN_TOOLS: ToolDefinition[] = [
  echoTool,
  sleepTool,
  bashTool,
  fsReadTool,
  fsWriteTool,
];

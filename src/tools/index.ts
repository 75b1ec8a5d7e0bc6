/** Tool dispatch: the port the engine runs tools through, and the built-in in-process tools. */
export type { ToolCall } from './tool-call.js';
export { abortError } from './abort-error.js';
export { resolveInProject } from './resolve-in-project.js';
export type { ToolContext, ToolDefinition } from './tool-definition.js';
export type { ToolDescription, ToolDispatcher } from './tool-dispatcher.js';
export { DEFAULT_RETRY_POLICY } from './default-retry-policy.js';
export { BuiltinDispatcher } from './builtin-dispatcher.js';
export * from './builtin/index.js';

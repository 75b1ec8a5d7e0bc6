import type { ToolDefinition } from '../tool-definition.js';

/** `dirigent/util/echo`: returns its parameters unchanged. For tests, benchmarks and plumbing. */
export const echoTool: ToolDefinition = {
  itemId: 'dirigent/util/echo',
  description: 'Returns its parameters as its result.',
  paramsSchema: { type: 'object' },
  examples: [
    {
      description: 'the parameters come back as the result',
      input: { message: 'hello', n: 3 },
      output: { message: 'hello', n: 3 },
    },
  ],
  // Returned as is, not copied: this tool is the engine benchmark's unit of work.
  execute: (params) => params,
};

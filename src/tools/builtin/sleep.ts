import { abortError } from '../abort-error.js';
import { type ToolDefinition } from '../tool-definition.js';

/**
 * `dirigent/util/sleep`: waits `ms` milliseconds and resolves `{ slept: ms }`. An abort of the
 * context's signal stops the wait at once.
 */
export const sleepTool: ToolDefinition = {
  itemId: 'dirigent/util/sleep',
  description: 'Waits the given number of milliseconds.',
  paramsSchema: {
    type: 'object',
    properties: {
      // setTimeout's limit; a larger delay would fire at once.
      ms: { type: 'integer', minimum: 0, maximum: 2147483647 },
    },
    required: ['ms'],
    additionalProperties: false,
  },
  examples: [{ description: 'waits 5 ms', input: { ms: 5 }, output: { slept: 5 } }],
  execute(params, ctx) {
    const ms = params.ms as number;
    const signal = ctx.signal;
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(abortError(signal, 'sleep'));
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortError(signal, 'sleep'));
      };
      const timer = setTimeout(() => {
        // The signal may outlive this call (one per run), so the listener must not pile up.
        signal.removeEventListener('abort', onAbort);
        resolve({ slept: ms });
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  },
};

/**
 * A command's action that loads the command's module only when the command runs: `dirigent
 * --help` or `dirigent run` never pays for the modules of the other commands (BullMQ, fastify,
 * the MCP SDK, the search index…).
 */

/** What a command's module exports for it: its exit status from its arguments and options. */
type CommandFunction<A extends unknown[]> = (...args: A) => number | Promise<number>;

/**
 * The action that imports `load`'s module, runs the command it resolves to with commander's
 * arguments, then flushes telemetry and exits with the command's status (`exitProcess`).
 *
 * ```ts
 * .action(lazyAction(async () => (await import('./run-command.js')).runCommand))
 * ```
 */
export function lazyAction<A extends unknown[]>(
  load: () => Promise<CommandFunction<A>>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const [command, { exitProcess }] = await Promise.all([
      load(),
      import('../telemetry/process-telemetry.js'),
    ]);
    await exitProcess(await command(...args));
  };
}

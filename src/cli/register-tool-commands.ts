import type { Command } from 'commander';
import { lazyAction } from './lazy-action.js';
import { projectOption } from './shared-options.js';

/**
 * Registers `validate`, `graph` and `tool run|create|show|test`: their options and help only; each
 * loads its command's module when it runs.
 */
export function registerToolCommands(program: Command): void {
  projectOption(
    program
      .command('validate')
      .description('Check directives without running them.')
      .argument('<targets...>', 'directive files or item ids'),
  )
    .option('--json', 'print the results as JSON')
    .option('--strict', 'count warnings as errors (for CI): any makes the directive invalid')
    .action(lazyAction(async () => (await import('./validate-command.js')).validateCommand));

  const tool = program.command('tool').description('Work with tools directly.');
  projectOption(
    tool
      .command('run')
      .description('Run one tool with parameters and print its result.')
      .argument('<item_id>', 'the tool, e.g. dirigent/util/echo')
      .option('--params <json|@file>', 'the parameters as a JSON object, or @file holding one'),
  )
    .option('--json', 'print {ok, result} or {ok, error} as JSON')
    .action(lazyAction(async () => (await import('./tool-command.js')).toolRunCommand));
  projectOption(
    tool
      .command('create')
      .description('Validate a new tool, write it into a space and register it in enabled.json.')
      .argument('<item_id>', 'where the tool goes, e.g. text/shout (→ .ai/tools/text/shout.py)')
      .option('--file <path>', 'read the source from this file (its extension decides the format)')
      .option('--code <source>', 'the source itself')
      .option('--ext <ext>', 'the format of --code: .py (default), .ts, .mjs, .js, .yaml')
      .option('--space <space>', 'project or user', 'project')
      .option('--force', 'replace a tool the space already has'),
  )
    .option('--json', 'print the outcome as JSON')
    .action(lazyAction(async () => (await import('./tool-create-command.js')).toolCreateCommand));
  projectOption(
    tool
      .command('show')
      .description('Show which file a tool resolves to, what it shadows, and its executor chain.')
      .argument('<item_id>'),
  )
    .option('--json', 'print as JSON')
    .action(lazyAction(async () => (await import('./tool-command.js')).toolShowCommand));
  projectOption(
    tool
      .command('test')
      .description("Run a tool's worked examples and report each one's pass or difference.")
      .argument('[item_id]', 'the tool, e.g. dirigent/fs/read')
      .option('--all', 'every tool with examples: the built-ins and the JS/TS tools of the spaces'),
  )
    .option('--json', 'print {ok, tools, outcomes} as JSON')
    .action(lazyAction(async () => (await import('./tool-test-command.js')).toolTestCommand));

  projectOption(
    program
      .command('graph')
      .description('Print the compiled machine of a directive as a Mermaid diagram.')
      .argument('<target>', 'directive file or item id'),
  ).action(lazyAction(async () => (await import('./validate-command.js')).graphCommand));
}

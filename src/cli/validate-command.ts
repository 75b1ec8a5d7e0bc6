import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { toMermaid } from '../compiler/to-mermaid.js';
import { formatDiagnostic } from '../directive/diagnostics.js';
import { diagnosticsOf } from '../directive/diagnostics.js';
import { DirectiveLoader, type LoadedDirective } from '../engine/directive-loader.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { validateLoaded } from '../operations/validate-directive.js';

/** Options of `validate` and `graph`. */
export interface ValidateOptions {
  json?: boolean;
  /** The project whose spaces item ids resolve in (and whose policy applies); default the cwd. */
  project?: string;
  /** `validate`: warnings count as errors. */
  strict?: boolean;
}

/**
 * `dirigent validate <file | item_id>…`: each target is a file or an item id, as `run` takes it,
 * checked as a start would check it (its text, and its tools, child directives and parameters
 * against the project); exit 0 when every one is valid, 2 otherwise. With `--strict`, warnings
 * are errors. `--json` prints, per target, `errors` and `warnings` apart.
 */
export async function validateCommand(targets: string[], opts: ValidateOptions): Promise<number> {
  const loader = new DirectiveLoader(opts.project ?? process.cwd());
  const results = [];
  for (const target of targets) {
    const { valid, errors, warnings } = await validateLoaded(loader, () => load(loader, target), {
      strict: opts.strict === true,
    });
    results.push({ file: target, valid, errors, warnings });
  }
  if (opts.json) process.stdout.write(JSON.stringify(results, null, 2) + '\n');
  else {
    for (const r of results) {
      for (const d of [...r.errors, ...r.warnings])
        process.stdout.write(formatDiagnostic(d) + '\n');
      process.stdout.write(`${r.valid ? 'ok' : 'invalid'} ${r.file}\n`);
    }
  }
  return results.every((r) => r.valid) ? 0 : 2;
}

/** `dirigent graph <file | item_id>`: the compiled machine as Mermaid. */
export async function graphCommand(target: string, opts: ValidateOptions): Promise<number> {
  try {
    const loaded = await load(new DirectiveLoader(opts.project ?? process.cwd()), target);
    process.stdout.write(toMermaid(loaded.compiled));
    return 0;
  } catch (err) {
    for (const d of diagnosticsOf(DirigentError.from(err)))
      process.stderr.write(formatDiagnostic(d) + '\n');
    return 2;
  }
}

/**
 * The directive `target` names, a file or an item id (`UNKNOWN_DIRECTIVE` when neither), parsed
 * and compiled under the project's policy. Its signature is not checked: validating a directive
 * is how one reviews it before signing.
 */
async function load(loader: DirectiveLoader, target: string): Promise<LoadedDirective> {
  const file = await loader.resolve(target);
  // Messages name a file as the command line gave it.
  const shown = file === resolve(loader.projectDir, target) ? target : file;
  return loader.fromText(shown, await readFile(file, 'utf8'));
}

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { toMermaid } from '../compiler/to-mermaid.js';
import { formatDiagnostic } from '../directive/diagnostics.js';
import type { Diagnostic } from '../directive/ast.js';
import { diagnosticsOf } from '../directive/diagnostics.js';
import { DirectiveLoader } from '../engine/directive-loader.js';
import { DirigentError } from '../errors/dirigent-error.js';

/** `dirigent validate`: exit 0 when every file is valid, 2 otherwise. */
export function validateCommand(files: string[], opts: { json?: boolean }): number {
  const loader = new DirectiveLoader(process.cwd());
  const results = files.map((file) => {
    try {
      const loaded = loader.fromText(file, readFileSync(resolve(file), 'utf8'));
      return {
        file,
        valid: true,
        errors: [] as Diagnostic[],
        warnings: loaded.compiled.directive.warnings,
      };
    } catch (err) {
      const e = DirigentError.from(err);
      return { file, valid: false, errors: diagnosticsOf(e), warnings: [] as Diagnostic[] };
    }
  });
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

/** `dirigent graph`: the compiled machine as Mermaid. */
export function graphCommand(file: string): number {
  try {
    const loaded = new DirectiveLoader(process.cwd()).fromText(
      file,
      readFileSync(resolve(file), 'utf8'),
    );
    process.stdout.write(toMermaid(loaded.compiled));
    return 0;
  } catch (err) {
    for (const d of diagnosticsOf(DirigentError.from(err)))
      process.stderr.write(formatDiagnostic(d) + '\n');
    return 2;
  }
}

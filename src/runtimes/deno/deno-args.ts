/** The command line and environment of a sandboxed Deno host. */
import { pathToFileURL } from 'node:url';
import { DirigentError } from '../../errors/dirigent-error.js';
import { ErrorCode } from '../../errors/error-codes.js';

/** Everything that decides how a host process is started. */
export interface DenoHostSpec {
  /** The Deno executable. */
  deno: string;
  /** The harness module (see `HARNESS_SOURCE`). */
  harness: string;
  /** `DENO_DIR`: Deno's module and transpile cache, outside the project. */
  denoDir: string;
  /** The tool module. */
  toolFile: string;
  format: 'dirigent' | 'rye';
  /** The working directory of the host. */
  projectDir: string;
  /** Directories the tool may read (the project and the tool's own directory). */
  readPaths: string[];
  /** Directories the tool may write (the project). */
  writePaths: string[];
  /** `false`: no network; `true`: every host; else these hosts (`host` or `host:port`). */
  network: boolean | string[];
  /** V8 old-space limit, MB. */
  memoryMb: number;
}

/**
 * `deno run` arguments for `spec`: no prompts, no config or lockfile lookups, reads of the
 * project and the tool's directory, writes to the project, the declared network hosts only, and
 * nothing else (no `--allow-run`, `--allow-env`, `--allow-sys` or `--allow-ffi`).
 */
export function denoArgs(spec: DenoHostSpec): string[] {
  const args = [
    'run',
    '--no-prompt',
    '--no-config',
    '--no-lock',
    `--allow-read=${pathList(spec.readPaths)}`,
    `--allow-write=${pathList(spec.writePaths)}`,
  ];
  if (spec.network === true) args.push('--allow-net');
  else if (Array.isArray(spec.network) && spec.network.length > 0)
    args.push(`--allow-net=${spec.network.join(',')}`);
  args.push(`--v8-flags=--max-old-space-size=${Math.max(1, Math.floor(spec.memoryMb))}`);
  args.push(spec.harness, pathToFileURL(spec.toolFile).href, spec.format);
  return args;
}

/**
 * The whole environment of a host: what Deno needs (`HOME`, `PATH`, `DENO_DIR`) and settings of
 * Deno itself; the tool cannot read any of it (no `--allow-env`).
 */
export function denoEnvironment(denoDir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ['HOME', 'PATH']) if (process.env[k] !== undefined) env[k] = process.env[k]!;
  return {
    ...env,
    DENO_DIR: denoDir,
    NO_COLOR: '1',
    DENO_NO_UPDATE_CHECK: '1',
    DENO_NO_PACKAGE_JSON: '1',
  };
}

/** Deno splits permission lists on commas and has no escape for them. */
function pathList(paths: readonly string[]): string {
  const bad = paths.find((p) => p.includes(','));
  if (bad !== undefined)
    throw DirigentError.fatal(
      ErrorCode.RUNTIME_UNAVAILABLE,
      `Deno cannot be granted access to a path containing a comma: ${bad}`,
      { hint: 'Move the project or the tool to a path without commas.' },
    );
  return [...new Set(paths)].join(',');
}

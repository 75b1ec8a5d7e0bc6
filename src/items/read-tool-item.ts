/**
 * Reads any tool file into a {@link ToolItem}, by extension, without running it: Python (RYE's
 * format and the self-registered one), YAML (tools, runtimes, primitives, MCP tools) and JS/TS.
 */
import { extname } from 'node:path';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { resolvePython } from '../runtimes/python-interpreter.js';
import { RuntimeId } from '../runtimes/runtime-ids.js';
import { parseConcurrencySpec, parseRateLimitSpec } from '../locks/lock-spec.js';
import type { Resolution } from './item-resolver.js';
import { readPythonToolMetadata } from './python-tool-metadata.js';
import { readYamlTool } from './read-yaml-tool.js';
import type { ToolItem } from './tool-item.js';

const JS_EXTENSIONS = new Set(['.ts', '.mjs', '.js', '.cjs']);

/** The item in `resolution.file`; `projectDir` decides which Python reads Python files. */
export async function readToolItem(resolution: Resolution, projectDir: string): Promise<ToolItem> {
  const file = resolution.file;
  const ext = extname(file);
  if (ext === '.yaml' || ext === '.yml') return readYamlTool(file);
  if (ext === '.py') {
    const meta = await readPythonToolMetadata(file, await resolvePython(projectDir));
    return {
      file,
      format: 'python',
      toolType: meta.toolType ?? 'python',
      executorId: meta.executorId ?? RuntimeId.PYTHON_FUNCTION,
      description: meta.description ?? '',
      version: meta.version,
      category: meta.category,
      paramsSchema: meta.paramsSchema ?? { type: 'object' },
      outputSchema: meta.outputSchema,
      config: meta.config ?? {},
      envConfig: meta.envConfig,
      requiredSecrets: meta.requiredSecrets,
      limits: {},
      network: false,
      ...gateSpecs(file, meta.concurrency, meta.rateLimit),
      ...(meta.bootstrap && { bootstrap: meta.bootstrap }),
      source: meta,
    };
  }
  if (JS_EXTENSIONS.has(ext)) {
    // Loaded on first use: the JS/TS reader brings a whole JavaScript parser.
    const { readJsToolMetadata } = await import('./js-tool-metadata.js');
    const meta = await readJsToolMetadata(file);
    return {
      file,
      format: 'javascript',
      toolType: meta.toolType ?? 'javascript',
      executorId: meta.executorId ?? RuntimeId.DENO,
      description: meta.description ?? '',
      version: meta.version,
      category: meta.category,
      paramsSchema: meta.inputSchema ?? { type: 'object' },
      outputSchema: meta.outputSchema,
      config: {},
      envConfig: undefined,
      requiredSecrets: meta.requiredSecrets,
      limits: meta.limits,
      network: meta.network,
      ...gateSpecs(file, meta.concurrency, meta.rateLimit),
      ...(meta.bootstrap && { bootstrap: meta.bootstrap }),
      source: meta,
    };
  }
  throw DirigentError.fatal(
    ErrorCode.INVALID_TOOL,
    `Tool "${resolution.itemId}" is a ${ext} file (${file}), which is not a tool format Dirigent runs.`,
    {
      location: { file, line: 1, column: 1 },
      hint: 'Write the tool in Python (.py), YAML (.yaml, naming a runtime) or JS/TS (.ts, .js, .mjs).',
    },
  );
}

/** A tool's `concurrency` and `rate_limit` declarations, checked, as {@link ToolItem} fields. */
function gateSpecs(
  file: string,
  concurrency: unknown,
  rateLimit: unknown,
): Pick<ToolItem, 'concurrency' | 'rateLimit'> {
  const at = { subject: `tool ${file}`, location: { file, line: 1, column: 1 } };
  const c = parseConcurrencySpec(concurrency, at);
  const r = parseRateLimitSpec(rateLimit, at);
  return { ...(c && { concurrency: c }), ...(r && { rateLimit: r }) };
}

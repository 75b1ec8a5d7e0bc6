/**
 * Reads a YAML tool (RYE §3.2: `version`, `tool_type`, `executor_id`, `category`, `description`,
 * `config_schema`, `env_config`, `config`; MCP tools add `input_schema`) into a {@link ToolItem}.
 * Dirigent also reads `output_schema`, `required_secrets`, `limits`, `concurrency`, `rate_limit`
 * and `bootstrap`. Runtimes and primitives
 * are YAML items of the same shape.
 */
import { readFile } from 'node:fs/promises';
import type * as Yaml from 'yaml';
import { parseBootstrapSpec } from '../services/bootstrap-spec.js';
import { LineIndex } from '../directive/line-index.js';
import { locateYamlKey } from '../directive/yaml-location.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { parseConcurrencySpec, parseRateLimitSpec } from '../locks/lock-spec.js';
import type { EnvConfig, ToolItem } from './tool-item.js';
import { lazyPackage } from '../lazy-package.js';
import { toolYamlInvalid } from '../errors/item-errors.js';

/** The YAML reader, loaded by the first YAML text read. */
const yaml = lazyPackage<typeof Yaml>('yaml');

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const cache = new Map<string, { text: string; item: ToolItem }>();

/** Reads (cached by content) the YAML tool in `file`; throws a located `INVALID_TOOL` if malformed. */
export async function readYamlTool(file: string): Promise<ToolItem> {
  const text = await readFile(file, 'utf8');
  const hit = cache.get(file);
  if (hit?.text === text) return hit.item;
  const item = parseYamlTool(text, file);
  cache.set(file, { text, item });
  return item;
}

/** Parses YAML tool text; see {@link readYamlTool}. */
export function parseYamlTool(text: string, file: string): ToolItem {
  const lines = new LineIndex(file, text);
  const doc = yaml().parseDocument(text);
  const fail = (message: string, path: string[], hint: string): never => {
    throw DirigentError.fatal(ErrorCode.INVALID_TOOL, `${file}: ${message}`, {
      location: locateYamlKey(doc, path, lines),
      hint,
    });
  };
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw toolYamlInvalid(file, e.message.split('\n')[0] ?? '', lines.at(e.pos[0]));
  }
  const root: unknown = doc.toJS();
  if (!isObj(root)) {
    return fail(
      'a YAML tool is a mapping of keys.',
      [],
      'Start with tool_type, executor_id and description.',
    );
  }
  const toolType = typeof root.tool_type === 'string' ? root.tool_type : 'yaml';
  if (toolType === 'graph') {
    fail(
      'this is a state graph, which runs as a directive.',
      ['tool_type'],
      'Run it with <execute item_type="directive"> or `dirigent run`, not as a tool.',
    );
  }
  if (toolType === 'mcp_server') {
    fail(
      'this is an MCP server definition, not a tool.',
      ['tool_type'],
      'Call one of its tools (.ai/tools/mcp/<server>/<tool>.yaml) instead.',
    );
  }
  if (!('executor_id' in root)) {
    fail(
      'executor_id is missing.',
      [],
      'Name the runtime that runs this tool, e.g. executor_id: rye/core/primitives/http_client (null only for a primitive).',
    );
  }
  const executorId = root.executor_id;
  if (executorId !== null && typeof executorId !== 'string') {
    fail('executor_id must be an item id or null.', ['executor_id'], 'Write the runtime item id.');
  }
  if (executorId === null && toolType !== 'primitive') {
    fail(
      `executor_id is null, which only a primitive may have (tool_type is "${toolType}").`,
      ['executor_id'],
      'Name the runtime that runs this tool, e.g. rye/core/runtimes/bash_runtime.',
    );
  }
  const objectAt = (key: string): Obj | undefined => {
    const v = root[key];
    if (v === undefined || v === null) return undefined;
    if (!isObj(v))
      return fail(`${key} must be a mapping.`, [key], `Write ${key} as key: value pairs.`);
    return v;
  };
  const schema = objectAt('config_schema') ?? objectAt('input_schema') ?? objectAt('parameters');
  const secrets = root.required_secrets ?? [];
  if (
    !Array.isArray(secrets) ||
    !secrets.every((s) => typeof s === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(s))
  ) {
    fail(
      'required_secrets must be a list of variable names.',
      ['required_secrets'],
      'Write e.g. required_secrets: [API_TOKEN].',
    );
  }
  const limits = objectAt('limits') ?? {};
  const positive = (key: string): number | undefined => {
    const v = limits[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !(v > 0)) {
      return fail(
        `limits.${key} must be a positive number.`,
        ['limits', key],
        `Write e.g. ${key}: 5000.`,
      );
    }
    return v;
  };
  const envConfig = objectAt('env_config') as EnvConfig | undefined;
  const source = (key: string) => ({
    subject: `tool ${file}`,
    location: locateYamlKey(doc, [key], lines),
  });
  const concurrency = parseConcurrencySpec(root.concurrency, source('concurrency'));
  const rateLimit = parseRateLimitSpec(root.rate_limit, source('rate_limit'));
  const bootstrap = parseBootstrapSpec(root.bootstrap, {
    subject: `YAML tool ${file}`,
    locate: (path) => locateYamlKey(doc, ['bootstrap', ...path], lines),
  });
  const memoryMb = positive('memory_mb');
  const timeoutMs = positive('timeout_ms');
  return {
    file,
    format: 'yaml',
    toolType,
    executorId: executorId as string | null,
    description: typeof root.description === 'string' ? root.description : '',
    version: root.version === undefined ? undefined : String(root.version),
    category: typeof root.category === 'string' ? root.category : undefined,
    paramsSchema: schema ?? { type: 'object' },
    outputSchema: objectAt('output_schema'),
    config: objectAt('config') ?? {},
    envConfig,
    requiredSecrets: secrets as string[],
    limits: { ...(memoryMb && { memoryMb }), ...(timeoutMs && { timeoutMs }) },
    network: false,
    ...(concurrency && { concurrency }),
    ...(rateLimit && { rateLimit }),
    ...(bootstrap && { bootstrap }),
    source: root,
  };
}

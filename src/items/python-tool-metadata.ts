/**
 * What a Python tool declares, read without running it: Python's own `ast` parses the file and
 * evaluates only literal module-level assignments, so no code of the tool runs. Two formats:
 * RYE's (`__version__`, `__tool_type__`, `__executor_id__`, `__category__`,
 * `__tool_description__`, `CONFIG_SCHEMA`, `execute(params, project_path)`) and the self-registered
 * format of seed 002 (`name`, `description`, `parameters`, `async def execute(params) -> str`).
 * Either may add `OUTPUT_SCHEMA`, `REQUIRED_SECRETS`, `CONCURRENCY`, `RATE_LIMIT` and `BOOTSTRAP`.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { parseBootstrapSpec, type BootstrapSpec } from '../services/bootstrap-spec.js';
import { contentHash } from '../directive/parse-directive.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';

/** The declarations of a Python tool file. */
export interface PythonToolMetadata {
  format: 'rye' | 'seed';
  version: string | undefined;
  toolType: string | undefined;
  executorId: string | undefined;
  category: string | undefined;
  description: string | undefined;
  /** JSON Schema of the parameters (`CONFIG_SCHEMA` or `parameters`). */
  paramsSchema: Record<string, unknown> | undefined;
  /** JSON Schema of the result (`OUTPUT_SCHEMA` or `output_schema`). */
  outputSchema: Record<string, unknown> | undefined;
  /** `REQUIRED_SECRETS` (or `required_secrets`): names of the secrets the tool needs. */
  requiredSecrets: string[];
  /** RYE's `CONFIG` and `ENV_CONFIG` dicts. */
  config: Record<string, unknown> | undefined;
  envConfig: Record<string, unknown> | undefined;
  /** `CONCURRENCY` and `RATE_LIMIT` dicts, as written (checked by the tool reader). */
  concurrency: unknown;
  rateLimit: unknown;
  /** `BOOTSTRAP`, checked: whether and how `dirigent worker` starts the tool by itself. */
  bootstrap?: BootstrapSpec;
  /** `name` of the seed format. */
  name: string | undefined;
  execute: { async: boolean; params: string[] } | undefined;
}

// Runs in Python: prints the literal module-level assignments and the shape of `execute`.
const READER = String.raw`
import ast, json, sys
src = open(sys.argv[1], encoding="utf-8").read()
try:
    tree = ast.parse(src, filename=sys.argv[1])
except SyntaxError as e:
    print(json.dumps({"syntax_error": {"msg": e.msg, "line": e.lineno, "col": e.offset}})); sys.exit(0)
out = {"values": {}, "execute": None, "non_literal": [], "lines": {}}
for node in tree.body:
    targets = []
    if isinstance(node, ast.Assign): targets, value = node.targets, node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None: targets, value = [node.target], node.value
    for t in targets:
        if isinstance(t, ast.Name):
            out["lines"][t.id] = node.lineno
            try: out["values"][t.id] = ast.literal_eval(value)
            except Exception: out["non_literal"].append(t.id)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "execute":
        out["execute"] = {"async": isinstance(node, ast.AsyncFunctionDef), "params": [a.arg for a in node.args.args]}
print(json.dumps(out, default=str))
`;
import { toolDoesNotParse, toolMissingFields } from '../errors/item-errors.js';

const cache = new Map<string, PythonToolMetadata>();
const SEED_FIELDS = ['name', 'description', 'parameters', 'execute'] as const;

/** Reads (and caches by content) the metadata of the Python tool in `file`. */
export async function readPythonToolMetadata(
  file: string,
  python: string,
): Promise<PythonToolMetadata> {
  const text = await readFile(file, 'utf8');
  const key = `${file}\0${contentHash(text)}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const raw = await runReader(file, python);
  if (raw.syntax_error) {
    throw toolDoesNotParse('Python', file, raw.syntax_error.msg, {
      file,
      line: raw.syntax_error.line ?? 1,
      column: raw.syntax_error.col ?? 1,
    });
  }
  const v = raw.values;
  const str = (k: string) => (typeof v[k] === 'string' ? (v[k] as string) : undefined);
  const rye = '__executor_id__' in v || 'CONFIG_SCHEMA' in v || '__tool_type__' in v;
  if (!rye) {
    const missing = SEED_FIELDS.filter((f) =>
      f === 'execute' ? raw.execute === null : !(f in v) && !raw.non_literal.includes(f),
    );
    if (missing.length > 0) {
      throw toolMissingFields(
        'Python',
        file,
        missing.map((name) => ({
          name,
          shown: name === 'execute' ? 'async def execute(params)' : name,
        })),
        "A tool file defines name, description, parameters and async def execute(params) -> str at module level (or RYE's __executor_id__ and CONFIG_SCHEMA).",
      );
    }
  }
  const meta: PythonToolMetadata = {
    format: rye ? 'rye' : 'seed',
    version: str('__version__'),
    toolType: str('__tool_type__'),
    executorId: str('__executor_id__'),
    category: str('__category__'),
    description: str(rye ? '__tool_description__' : 'description'),
    paramsSchema:
      (v[rye ? 'CONFIG_SCHEMA' : 'parameters'] as Record<string, unknown> | undefined) ?? undefined,
    outputSchema: dict(v.OUTPUT_SCHEMA ?? v.output_schema),
    requiredSecrets: secretNames(file, v.REQUIRED_SECRETS ?? v.required_secrets),
    config: dict(v.CONFIG),
    envConfig: dict(v.ENV_CONFIG),
    concurrency: v.CONCURRENCY,
    rateLimit: v.RATE_LIMIT,
    name: str('name'),
    execute: raw.execute ?? undefined,
  };
  const bootstrap = bootstrapSpec(file, raw);
  if (bootstrap !== undefined) meta.bootstrap = bootstrap;
  cache.set(key, meta);
  return meta;
}

function dict(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

function secretNames(file: string, v: unknown): string[] {
  if (v === undefined) return [];
  if (Array.isArray(v) && v.every((n) => typeof n === 'string')) return v as string[];
  throw DirigentError.fatal(
    ErrorCode.INVALID_TOOL,
    `Python tool ${file}: REQUIRED_SECRETS must be a list of variable names.`,
    {
      location: { file, line: 1, column: 1 },
      hint: 'Write e.g. REQUIRED_SECRETS = ["API_TOKEN"].',
    },
  );
}

/** `BOOTSTRAP`, checked; errors are located at its assignment. */
function bootstrapSpec(file: string, raw: ReaderOutput): BootstrapSpec | undefined {
  const location = { file, line: raw.lines?.BOOTSTRAP ?? 1, column: 1 };
  if (raw.non_literal.includes('BOOTSTRAP') && !('BOOTSTRAP' in raw.values)) {
    throw DirigentError.fatal(
      ErrorCode.INVALID_TOOL,
      `Python tool ${file}: BOOTSTRAP must be a literal dict (it is read without running the module).`,
      {
        location,
        hint: 'Write e.g. BOOTSTRAP = {"enabled": True, "mode": "once", "priority": 50}.',
        details: { path: 'BOOTSTRAP' },
      },
    );
  }
  return parseBootstrapSpec(raw.values.BOOTSTRAP, {
    subject: `Python tool ${file}`,
    name: 'BOOTSTRAP',
    locate: () => location,
  });
}

interface ReaderOutput {
  values: Record<string, unknown>;
  non_literal: string[];
  /** Line of the last module-level assignment of each name. */
  lines?: Record<string, number>;
  execute: { async: boolean; params: string[] } | null;
  syntax_error?: { msg: string; line: number | null; col: number | null };
}

function runReader(file: string, python: string): Promise<ReaderOutput> {
  return new Promise((resolve, reject) => {
    execFile(
      python,
      ['-I', '-c', READER, file],
      { timeout: 10_000, maxBuffer: 4 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err)
          reject(
            DirigentError.fatal(
              ErrorCode.TOOL_FAILED,
              `Reading Python tool ${file} failed: ${stderr.trim() || err.message}`,
            ),
          );
        else resolve(JSON.parse(stdout) as ReaderOutput);
      },
    );
  });
}

/**
 * Runs a Python tool in a subprocess per call (a warm host comes later behind the same call):
 * RYE's script runtime calls the file's CLI (`--params`, `--project-path`); the function runtime,
 * and the self-registered format, import the module in a small harness and call `execute`.
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { PythonToolMetadata } from '../items/python-tool-metadata.js';
import { runProcess, toolEnvironment } from './run-process.js';

/** RYE's runtime that runs a tool file as a script. */
export const PYTHON_SCRIPT_RUNTIME = 'rye/core/runtimes/python_script_runtime';

const MARK = '@@dirigent-result@@';
// Imports the tool by path, calls execute (awaiting a coroutine), and prints the result, or the
// exception with whether a retry may help, after a marker (the tool may print too).
const HARNESS = String.raw`
import asyncio, importlib.util, inspect, json, sys, traceback
path, project = sys.argv[1], sys.argv[2]
params = json.loads(sys.stdin.read() or "{}")
def emit(obj):
    sys.stdout.write("${MARK}" + json.dumps(obj, default=str)); sys.stdout.flush()
try:
    spec = importlib.util.spec_from_file_location("dirigent_tool", path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    fn = mod.execute
    args = (params, project) if len(inspect.signature(fn).parameters) >= 2 else (params,)
    out = fn(*args)
    if inspect.isawaitable(out): out = asyncio.run(out) if inspect.iscoroutine(out) else asyncio.get_event_loop().run_until_complete(out)
    emit({"result": out})
except Exception as e:
    retryable = isinstance(e, (TimeoutError, ConnectionError)) or bool(getattr(e, "retryable", False))
    emit({"exception": {"type": type(e).__name__, "message": str(e), "retryable": retryable, "traceback": traceback.format_exc()[-2000:]}})
`;

/** What a run of a Python tool needs. */
export interface PythonToolCall {
  python: string;
  file: string;
  itemId: string;
  meta: PythonToolMetadata;
  params: Record<string, unknown>;
  projectDir: string;
  signal: AbortSignal;
  timeoutMs: number;
}

/** Runs the tool and returns its result, or rejects with a retryable or fatal `DirigentError`. */
export async function runPythonTool(call: PythonToolCall): Promise<unknown> {
  const label = `python tool ${call.itemId}`;
  const script = call.meta.executorId === PYTHON_SCRIPT_RUNTIME;
  const result = await runProcess({
    file: call.python,
    args: script
      ? [call.file, '--params', JSON.stringify(call.params), '--project-path', call.projectDir]
      : ['-c', HARNESS, call.file, call.projectDir],
    ...(script ? {} : { input: JSON.stringify(call.params) }),
    cwd: call.projectDir,
    env: toolEnvironment({ PYTHONUNBUFFERED: '1' }),
    timeoutMs: call.timeoutMs,
    signal: call.signal,
    label,
  });
  if (script) {
    if (result.exitCode !== 0)
      throw failed(label, result.stderr, `exited with code ${result.exitCode}`, false);
    return fromRye(label, parseJson(label, result.stdout.trim()));
  }
  const at = result.stdout.lastIndexOf(MARK);
  if (at === -1)
    throw failed(label, result.stderr, `ended (code ${result.exitCode}) without a result`, false);
  const out = parseJson(label, result.stdout.slice(at + MARK.length)) as {
    result?: unknown;
    exception?: { type: string; message: string; retryable: boolean; traceback: string };
  };
  if (out.exception) {
    const e = out.exception;
    throw new DirigentError(ErrorCode.TOOL_FAILED, `${label} raised ${e.type}: ${e.message}`, {
      retryable: e.retryable,
      details: { type: e.type, traceback: e.traceback },
    });
  }
  return call.meta.format === 'rye' ? fromRye(label, out.result) : out.result;
}

/** RYE's result dict: `{"success": false, "error": …, "retryable": …}` is a failure. */
function fromRye(label: string, value: unknown): unknown {
  if (
    value !== null &&
    typeof value === 'object' &&
    (value as { success?: unknown }).success === false
  ) {
    const v = value as { error?: unknown; retryable?: unknown };
    throw new DirigentError(
      ErrorCode.TOOL_FAILED,
      `${label} failed: ${String(v.error ?? 'no error message')}`,
      { retryable: v.retryable === true, details: { result: value } },
    );
  }
  return value;
}

function parseJson(label: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw DirigentError.fatal(
      ErrorCode.TOOL_FAILED,
      `${label} printed no JSON result: ${text.slice(0, 200) || '(nothing)'}`,
    );
  }
}

function failed(label: string, stderr: string, how: string, retryable: boolean): DirigentError {
  const tail = stderr.trimEnd().split('\n').slice(-5).join('\n');
  return new DirigentError(
    ErrorCode.TOOL_FAILED,
    `${label} ${how}${tail ? `; stderr ends:\n${tail}` : ''}`,
    { retryable },
  );
}

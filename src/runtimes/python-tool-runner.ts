/**
 * Runs a Python tool. RYE's script runtime calls the file's CLI (`--params`, `--project-path`) in
 * a new process per call; the function runtime, and the self-registered format, call `execute` on
 * a warm host of the default {@link PythonHostPool}. {@link spawnPythonTool} runs either in a
 * new process (the function runtime through a small harness that imports the module).
 */
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { PythonToolMetadata } from '../items/python-tool-metadata.js';
import { fromRye } from './from-rye.js';
import { defaultPythonHostPool } from './python-host/default-python-host-pool.js';
import type { PythonHostPool } from './python-host/python-host-pool.js';
import { pythonToolError, type PythonException } from './python-tool-error.js';
import { runProcess, toolEnvironment } from './run-process.js';
import { stderrTail } from './stderr-tail.js';

export { defaultPythonHostPool } from './python-host/default-python-host-pool.js';

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
  /** Extra environment variables (declared secrets) for this call only. */
  env?: Record<string, string>;
  signal: AbortSignal;
  timeoutMs: number;
}

/**
 * Runs the tool and returns its result, or rejects with a retryable or fatal `DirigentError`:
 * the script runtime in a new process, the function runtime on `pool` (default: the
 * {@link defaultPythonHostPool}).
 */
export async function runPythonTool(
  call: PythonToolCall,
  pool: PythonHostPool = defaultPythonHostPool(),
): Promise<unknown> {
  if (call.meta.executorId === PYTHON_SCRIPT_RUNTIME) return spawnPythonTool(call);
  return pool.call({
    python: call.python,
    file: call.file,
    itemId: call.itemId,
    params: call.params,
    projectDir: call.projectDir,
    ...(call.env && { env: call.env }),
    format: call.meta.format,
    signal: call.signal,
    timeoutMs: call.timeoutMs,
  });
}

/**
 * Runs the tool in a new Python process, whatever its runtime: the script runtime as a script,
 * the function runtime through a harness that imports the file and calls `execute`. Slower than a
 * warm host by the start of Python (tens of ms), but nothing is shared between calls.
 */
export async function spawnPythonTool(call: PythonToolCall): Promise<unknown> {
  const label = `python tool ${call.itemId}`;
  const script = call.meta.executorId === PYTHON_SCRIPT_RUNTIME;
  const result = await runProcess({
    file: call.python,
    args: script
      ? [call.file, '--params', JSON.stringify(call.params), '--project-path', call.projectDir]
      : ['-c', HARNESS, call.file, call.projectDir],
    ...(script ? {} : { input: JSON.stringify(call.params) }),
    cwd: call.projectDir,
    env: toolEnvironment({ ...call.env, PYTHONUNBUFFERED: '1' }),
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
    exception?: PythonException;
  };
  if (out.exception) throw pythonToolError(label, out.exception);
  return call.meta.format === 'rye' ? fromRye(label, out.result) : out.result;
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
  const tail = stderrTail(stderr);
  return new DirigentError(
    ErrorCode.TOOL_FAILED,
    `${label} ${how}${tail ? `; stderr ends:\n${tail}` : ''}`,
    { retryable },
  );
}

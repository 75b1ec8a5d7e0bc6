/**
 * The baseline of the warm Python host benchmark: one call of a Python function tool in a new
 * process, as a runtime without a warm host would make it.
 */
import { DirigentError } from '../src/errors/dirigent-error.js';
import { ErrorCode } from '../src/errors/error-codes.js';
import type { PythonToolMetadata } from '../src/items/python-tool-metadata.js';
import { fromRye } from '../src/runtimes/from-rye.js';
import { pythonToolError, type PythonException } from '../src/runtimes/python-tool-error.js';
import { runProcess, toolEnvironment } from '../src/runtimes/run-process.js';
import { stderrTail } from '../src/runtimes/stderr-tail.js';

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

/** One spawned call. */
export interface SpawnedPythonCall {
  python: string;
  file: string;
  itemId: string;
  meta: PythonToolMetadata;
  params: Record<string, unknown>;
  projectDir: string;
  env?: Record<string, string>;
  signal: AbortSignal;
  timeoutMs: number;
}

/**
 * Calls a Python tool's `execute` in a new process through a harness that imports the file: what
 * the warm host saves (the start of Python, tens of ms, and the import), with nothing shared
 * between calls.
 */
export async function spawnPythonTool(call: SpawnedPythonCall): Promise<unknown> {
  const label = `python tool ${call.itemId}`;
  const result = await runProcess({
    file: call.python,
    args: ['-c', HARNESS, call.file, call.projectDir],
    input: JSON.stringify(call.params),
    cwd: call.projectDir,
    env: toolEnvironment({ ...call.env, PYTHONUNBUFFERED: '1' }),
    timeoutMs: call.timeoutMs,
    signal: call.signal,
    label,
  });
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

/**
 * The Python side of a warm host, run as `python -u -c PYTHON_HOST_SOURCE <nonce>` with the
 * project directory as its working directory.
 *
 * Protocol: one JSON request a line on stdin, `{"id", "file", "params", "project", "env"}` and
 * optionally `"traceparent"`; one response per request on stdout, `"\n" + nonce + JSON + "\n"`,
 * holding `result` or `exception` (`type`, `message`, `retryable`, `traceback`). A first response
 * `{"ready": pid}` says the host started. The host keeps the protocol pipes on private file
 * descriptors (not inherited by subprocesses) and points fds 0 and 1 at /dev/null and stderr, so
 * nothing a tool or its children read or print can break the protocol; the nonce guards against
 * anything that still gets through.
 *
 * A tool file is compiled and run once per content (checked by `mtime_ns` and size on each call),
 * as a module named after its path, with its directory on `sys.path` during the import as a
 * script would have. Bytecode caches are neither read nor written, so an edit is never hidden by
 * a stale `.pyc`. `execute(params, project_path)` or `execute(params)`, by arity, sync or async
 * (one event loop per host). The environment, working directory and `sys.stdout` are restored
 * after each call. The host exits when stdin closes.
 *
 * `TRACEPARENT` is set in `os.environ` for the call from the request's `traceparent`, and removed
 * for a call without one, so a tool never reads the trace of an earlier call. The environment is
 * the process's, which is sound because a host serves one call at a time (its event loop runs
 * only during a call); only threads or tasks a tool leaves running after `execute` returns would
 * see a later call's value.
 */
export const PYTHON_HOST_SOURCE = String.raw`
import asyncio, hashlib, importlib.util, inspect, json, os, sys, traceback

NONCE = sys.argv[1]
PROJECT = os.getcwd()
_responses = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
_requests = os.fdopen(os.dup(0), "rb")
os.dup2(2, 1)
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
_stdout = sys.stdout
_loop = asyncio.new_event_loop()
asyncio.set_event_loop(_loop)
_modules = {}

def _send(obj):
    try:
        text = json.dumps(obj, default=str, allow_nan=False)
    except (TypeError, ValueError) as e:
        text = json.dumps({"id": obj.get("id"), "exception": {"type": type(e).__name__, "message": "the result is not JSON: " + str(e), "retryable": False, "traceback": ""}})
    _responses.write("\n" + NONCE + text + "\n")
    _responses.flush()

def _load(path):
    st = os.stat(path)
    cached = _modules.get(path)
    if cached is not None and cached[0] == st.st_mtime_ns and cached[1] == st.st_size:
        return cached[2]
    name = "dirigent_tool_" + hashlib.sha1(path.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    mod.__cached__ = None
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec", dont_inherit=True)
    folder = os.path.dirname(os.path.abspath(path))
    previous = sys.modules.get(name)
    sys.modules[name] = mod
    sys.path.insert(0, folder)
    try:
        exec(code, mod.__dict__)
    except BaseException:
        if previous is None: sys.modules.pop(name, None)
        else: sys.modules[name] = previous
        raise
    finally:
        try: sys.path.remove(folder)
        except ValueError: pass
    _modules[path] = (st.st_mtime_ns, st.st_size, mod)
    return mod

def _describe(e):
    try: retryable = isinstance(e, (TimeoutError, ConnectionError)) or bool(getattr(e, "retryable", False))
    except Exception: retryable = False
    try: message = str(e)
    except Exception: message = repr(type(e))
    return {"type": type(e).__name__, "message": message, "retryable": retryable, "traceback": traceback.format_exc()[-2000:]}

def _call(req):
    fn = _load(req["file"]).execute
    params = req.get("params") or {}
    args = (params, req["project"]) if len(inspect.signature(fn).parameters) >= 2 else (params,)
    out = fn(*args)
    if inspect.isawaitable(out): out = _loop.run_until_complete(out)
    return out

def _serve(req):
    saved = {}
    env = dict(req.get("env") or {})
    env["TRACEPARENT"] = req.get("traceparent")
    for k, v in env.items():
        saved[k] = os.environ.get(k)
        if v is None: os.environ.pop(k, None)
        else: os.environ[k] = v
    sys.stdout = sys.stderr
    try:
        return {"id": req["id"], "result": _call(req)}
    except BaseException as e:
        return {"id": req["id"], "exception": _describe(e)}
    finally:
        sys.stdout = _stdout
        for k, old in saved.items():
            if old is None: os.environ.pop(k, None)
            else: os.environ[k] = old
        try:
            if os.getcwd() != PROJECT: os.chdir(PROJECT)
        except OSError:
            os.chdir(PROJECT)

_send({"ready": os.getpid()})
for _line in _requests:
    if _line.strip():
        _send(_serve(json.loads(_line)))
`;

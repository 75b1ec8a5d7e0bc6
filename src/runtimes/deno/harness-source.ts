/**
 * The program a warm Deno host runs (JavaScript, executed by Deno, never by Node). It reads a
 * nonce line from stdin, redirects `console` to stderr, imports the tool module once, then serves
 * JSON-line requests `{id, input, secrets, projectPath, itemId, traceparent?}` with responses
 * `<nonce>{"id", "ok", "result" | "error"}` on stdout. The tool's `context` is
 * `{projectPath, secrets, itemId, log}`, plus `traceparent` when the request has one: the trace
 * context travels per call, as a warm host serves calls of many runs. Lines without the nonce (a
 * tool writing to `Deno.stdout` itself) are not protocol. Arguments: the tool's file URL and its
 * format.
 */
export const HARNESS_SOURCE = `// Dirigent's Deno harness: serves calls of one tool module over JSON lines.
const enc = new TextEncoder();
const dec = new TextDecoder();
const stdout = Deno.stdout;
const writeAll = (bytes) => {
  let n = 0;
  while (n < bytes.length) n += stdout.writeSync(bytes.subarray(n));
};
const toStderr = console.error.bind(console);
console.log = console.info = console.debug = (...args) => toStderr(...args);
console.dir = console.dirxml = (value, options) => toStderr(Deno.inspect(value, { ...options, colors: false }));
console.table = (data) => toStderr(Deno.inspect(data, { colors: false }));
const counts = new Map();
console.count = (label = 'default') => {
  const n = (counts.get(label) ?? 0) + 1;
  counts.set(label, n);
  toStderr(label + ': ' + n);
};
console.countReset = (label = 'default') => void counts.delete(label);
const timers = new Map();
console.time = (label = 'default') => void timers.set(label, performance.now());
console.timeLog = (label = 'default', ...args) =>
  toStderr(label + ': ' + (performance.now() - (timers.get(label) ?? performance.now())).toFixed(3) + 'ms', ...args);
console.timeEnd = (label = 'default') => {
  console.timeLog(label);
  timers.delete(label);
};
globalThis.addEventListener('unhandledrejection', (e) => {
  e.preventDefault();
  toStderr('dirigent: unhandled rejection in the tool:', e.reason);
});
globalThis.addEventListener('error', (e) => {
  e.preventDefault();
  toStderr('dirigent: uncaught error in the tool:', e.error);
});

const reader = Deno.stdin.readable.getReader();
let lines = [];
let partial = [];
async function nextLine() {
  while (lines.length === 0) {
    const { value, done } = await reader.read();
    if (done) return undefined;
    const chunk = dec.decode(value, { stream: true });
    let start = 0;
    let at;
    while ((at = chunk.indexOf('\\n', start)) !== -1) {
      lines.push(partial.join('') + chunk.slice(start, at));
      partial = [];
      start = at + 1;
    }
    if (start < chunk.length) partial.push(chunk.slice(start));
  }
  return lines.shift();
}

function text(value) {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

function denial(e, depth) {
  if (e === null || typeof e !== 'object' || depth > 8) return undefined;
  const name = text(e.name);
  const message = text(e.message);
  if (e instanceof Deno.errors.NotCapable || name === 'NotCapable') return message;
  if ((e instanceof Deno.errors.PermissionDenied || name === 'PermissionDenied') && /^Requires \\w+ access/.test(message))
    return message;
  const inner = denial(e.cause, depth + 1);
  if (inner !== undefined || !Array.isArray(e.errors)) return inner;
  for (const x of e.errors) {
    const d = denial(x, depth + 1);
    if (d !== undefined) return d;
  }
  return undefined;
}

function describe(e) {
  try {
    const denied = denial(e, 0);
    if (e instanceof Error) {
      const ctor = e.constructor && e.constructor.name;
      return {
        name: text(e.name),
        message: text(e.message),
        stack: text(e.stack ?? '').slice(0, 4000),
        retryable: e.retryable === true || e.name === 'RetryableError' || ctor === 'RetryableError',
        denied,
      };
    }
    const retryable = e !== null && typeof e === 'object' && e.retryable === true;
    return { name: typeof e, message: text(e), retryable, denied };
  } catch (inner) {
    return { name: 'Error', message: 'the tool threw something that cannot be described', retryable: false };
  }
}

const nonce = await nextLine();
if (nonce === undefined) Deno.exit(0);
const send = (message) => writeAll(enc.encode(nonce + JSON.stringify(message) + '\\n'));
const [toolUrl, format] = Deno.args;

let execute;
try {
  const mod = await import(toolUrl);
  execute = mod.execute;
} catch (e) {
  send({ id: 0, ok: false, phase: 'load', error: describe(e) });
  Deno.exit(0);
}
if (typeof execute !== 'function') {
  const error = { name: 'InvalidTool', message: 'the module does not export a function execute', retryable: false };
  send({ id: 0, ok: false, phase: 'load', error });
  Deno.exit(0);
}

async function handle(request) {
  const id = request.id;
  let result;
  try {
    const secrets = Object.freeze({ ...request.secrets });
    const context = Object.freeze({
      projectPath: request.projectPath,
      secrets,
      itemId: request.itemId,
      log: (...args) => toStderr(...args),
      ...(typeof request.traceparent === 'string' && { traceparent: request.traceparent }),
    });
    result = await (format === 'rye' ? execute(request.input, request.projectPath) : execute(request.input, context));
  } catch (e) {
    send({ id, ok: false, error: describe(e) });
    return;
  }
  const kind = typeof result;
  let line;
  try {
    if (kind === 'function' || kind === 'symbol' || kind === 'bigint') throw new TypeError('it is a ' + kind);
    line = JSON.stringify({ id, ok: true, result: result === undefined ? null : result });
  } catch (e) {
    const message = 'the result is not JSON-serialisable: ' + text(e && e.message);
    send({ id, ok: false, error: { name: 'NotSerializable', message, retryable: false } });
    return;
  }
  writeAll(enc.encode(nonce + line + '\\n'));
}

for (;;) {
  const line = await nextLine();
  if (line === undefined) Deno.exit(0);
  if (line.length === 0) continue;
  handle(JSON.parse(line));
}
`;

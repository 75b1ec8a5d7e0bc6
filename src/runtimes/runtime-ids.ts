/** Item ids of the runtimes and primitives Dirigent ships in the system space. */
export const RuntimeId = {
  /** RYE's Python function runtime; the default for Python tools that name none. */
  PYTHON_FUNCTION: 'rye/core/runtimes/python_function_runtime',
  PYTHON_SCRIPT: 'rye/core/runtimes/python_script_runtime',
  /** The runtime of Dirigent's JS/TS tools (`export async function execute(input, context)`). */
  DENO: 'dirigent/runtimes/deno_runtime',
} as const;

/** Item ids of the primitives, each backed by code. */
export const PrimitiveId = {
  SUBPROCESS: 'rye/core/primitives/subprocess',
  HTTP_CLIENT: 'rye/core/primitives/http_client',
  PYTHON_HOST: 'dirigent/primitives/python_host',
  DENO: 'dirigent/primitives/deno',
  MCP: 'dirigent/primitives/mcp',
} as const;

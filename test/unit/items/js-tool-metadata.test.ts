import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirigentError } from '../../../src/errors/index.js';
import { readJsToolMetadata } from '../../../src/items/js-tool-metadata.js';

const FIXTURES = resolve('test/fixtures/deno');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dirigent-js-meta-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tool(name: string, source: string): string {
  const file = join(dir, name);
  writeFileSync(file, source);
  return file;
}

async function failure(file: string): Promise<DirigentError> {
  try {
    await readJsToolMetadata(file);
  } catch (err) {
    if (err instanceof DirigentError) return err;
    throw err;
  }
  throw new Error(`expected ${file} to be refused`);
}

describe('readJsToolMetadata', () => {
  it('reads every field of a Dirigent-format TS tool', async () => {
    const meta = await readJsToolMetadata(join(FIXTURES, 'word-count.ts'));
    expect(meta).toMatchObject({
      format: 'dirigent',
      description: 'Counts words in a text',
      version: '1.0.0',
      executorId: undefined,
      toolType: undefined,
      category: undefined,
      inputSchema: {
        type: 'object',
        properties: { text: { type: 'string', minLength: -0 } },
        required: ['text'],
      },
      outputSchema: { type: 'object', properties: { words: { type: 'integer' } } },
      limits: { memoryMb: 64, timeoutMs: 5000 },
      network: false,
      requiredSecrets: [],
      examples: [{ input: { text: 'a b' }, output: { words: 2 }, description: 'two words' }],
      hasExecute: true,
    });
    expect(meta.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads without running the module', async () => {
    const marker = join(dir, 'ran.txt');
    const file = tool(
      'side-effect.mjs',
      `import { writeFileSync } from 'node:fs';
writeFileSync(${JSON.stringify(marker)}, 'the module ran');
export const description = 'Has a side effect at import';
export const permissions = { network: ['api.example.com', '127.0.0.1:8080', '[::1]'] };
export const required_secrets = ['API_KEY', 'OTHER_TOKEN'];
export const execute = async (input) => input;
`,
    );
    const meta = await readJsToolMetadata(file);
    expect(existsSync(marker)).toBe(false);
    expect(meta.network).toEqual(['api.example.com', '127.0.0.1:8080', '[::1]']);
    expect(meta.requiredSecrets).toEqual(['API_KEY', 'OTHER_TOKEN']);
    expect(meta.limits).toEqual({ memoryMb: undefined, timeoutMs: undefined });
    expect(meta.hasExecute).toBe(true);
  });

  it("reads RYE's constants, resolving references to literal constants", async () => {
    const meta = await readJsToolMetadata(join(FIXTURES, 'rye-tool.ts'));
    expect(meta).toMatchObject({
      format: 'rye',
      version: '1.2.0',
      toolType: 'javascript',
      executorId: 'rye/core/runtimes/node/node',
      category: 'rye/code/demo',
      description: 'Echo the params back, RYE style',
      inputSchema: {
        type: 'object',
        properties: { action: { type: 'string', enum: ['echo', 'fail'] } },
        required: ['action'],
      },
      network: false,
      hasExecute: true,
    });
  });

  it('reads RYE constants that are not exported (as RYE examples write them)', async () => {
    const file = tool(
      'text_stats.js',
      `const __version__ = "1.0.0";
const __tool_type__ = "javascript";
const __executor_id__ = "rye/core/runtimes/node/node";
const __tool_description__ = "Analyze text statistics";
const CONFIG_SCHEMA = { type: "object", properties: { text: { type: "string" } } };
async function execute(params, projectPath) { return { success: true }; }
`,
    );
    const meta = await readJsToolMetadata(file);
    expect(meta.format).toBe('rye');
    expect(meta.description).toBe('Analyze text statistics');
    expect(meta.inputSchema).toEqual({ type: 'object', properties: { text: { type: 'string' } } });
    expect(meta.hasExecute).toBe(false); // not exported: a CLI script, not an importable tool
  });

  it('lists exactly what a Dirigent-format tool is missing', async () => {
    const both = await failure(tool('empty.ts', `export const version = '1.0.0';\n`));
    expect(both.code).toBe('INVALID_TOOL');
    expect(both.details).toEqual({ missing: ['description', 'execute'] });
    expect(both.message).toMatch(/missing `export const description` and `export async function/);

    const one = await failure(
      tool('no-execute.ts', `export const description = 'x';\nfunction execute() {}\n`),
    );
    expect(one.details).toEqual({ missing: ['execute'] });
    expect(one.message).not.toMatch(/description/);
  });

  it('locates an export that is not a literal', async () => {
    const file = tool(
      'computed.ts',
      `export const description = 'ok';
export const input_schema = {
  type: 'object',
  properties: { text: { type: makeType() } },
};
export async function execute() {}
function makeType() { return 'string'; }
`,
    );
    const err = await failure(file);
    expect(err.code).toBe('INVALID_TOOL');
    expect(err.retryable).toBe(false);
    expect(err.location).toEqual({ file, line: 4, column: 31 });
    expect(err.message).toContain('export `input_schema` is not a literal');
    expect(err.message).toContain('input_schema.properties.text.type');
    expect(err.message).toContain('a call expression');
    expect(err.describe()).toContain(`${file}:4:31`);
  });

  it('refuses template literals with expressions and let declarations', async () => {
    const template = await failure(
      tool(
        'template.ts',
        'const who = "x";\nexport const description = `for ${who}`;\nexport function execute() {}\n',
      ),
    );
    expect(template.message).toMatch(/`description` is not a literal.*template literal/);
    expect(template.location).toMatchObject({ line: 2, column: 28 });

    const mutable = await failure(
      tool('let.js', `export let description = 'x';\nexport function execute() {}\n`),
    );
    expect(mutable.message).toMatch(/`description` is not a literal: it is not a const/);
  });

  it('names the path of a field with the wrong shape', async () => {
    const network = await failure(
      tool(
        'bad-network.ts',
        `export const description = 'x';\nexport const permissions = { network: ['https://api.example.com/v1'] };\nexport function execute() {}\n`,
      ),
    );
    expect(network.code).toBe('INVALID_TOOL');
    expect(network.details).toEqual({ path: 'permissions.network[0]' });
    expect(network.location).toMatchObject({ line: 2 });

    const notList = await failure(
      tool(
        'bad-network-2.ts',
        `export const description = 'x';\nexport const permissions = { network: 'yes' };\nexport function execute() {}\n`,
      ),
    );
    expect(notList.message).toContain(
      '`permissions.network` must be true, false or a list of hosts',
    );

    const limits = await failure(
      tool(
        'bad-limits.ts',
        `export const description = 'x';\nexport const limits = { memory_mb: 0, timeout_ms: 10 };\nexport function execute() {}\n`,
      ),
    );
    expect(limits.details).toEqual({ path: 'limits.memory_mb' });
    expect(limits.message).toContain('must be a positive number');

    const typo = await failure(
      tool(
        'typo.ts',
        `export const description = 'x';\nexport const limits = { memory_MB: 64 };\nexport function execute() {}\n`,
      ),
    );
    expect(typo.message).toContain('did you mean `memory_mb`?');
  });

  it('locates a syntax error', async () => {
    const file = tool('broken.ts', `export const description = 'x';\nexport const version = ;\n`);
    const err = await failure(file);
    expect(err.code).toBe('INVALID_TOOL');
    expect(err.message).toContain('does not parse');
    expect(err.location).toEqual({ file, line: 2, column: 24 });
  });

  it('caches by content and re-reads a changed file', async () => {
    const file = tool(
      'cached.ts',
      `export const description = 'one';\nexport function execute() {}\n`,
    );
    const first = await readJsToolMetadata(file);
    expect(await readJsToolMetadata(file)).toBe(first);
    writeFileSync(file, `export const description = 'two';\nexport function execute() {}\n`);
    const second = await readJsToolMetadata(file);
    expect(second.description).toBe('two');
    expect(second.hash).not.toBe(first.hash);
  });
});

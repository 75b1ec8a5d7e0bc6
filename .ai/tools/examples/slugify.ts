/**
 * Turns a title into a URL slug. A Dirigent JS/TS tool: its metadata are literal exports read
 * without running the file, and execute(input, context) runs in a Deno sandbox with no network,
 * file access only inside the project, and the memory and time limits below.
 */
export const description = 'Turns a title into a lowercase, hyphenated URL slug.';
export const version = '1.0.0';
export const input_schema = {
  type: 'object',
  properties: {
    title: { type: 'string', description: 'The title to turn into a slug' },
    max_length: { type: 'integer', minimum: 8, default: 40 },
  },
  required: ['title'],
};
export const output_schema = {
  type: 'object',
  properties: { slug: { type: 'string', pattern: '^[a-z0-9-]*$' }, truncated: { type: 'boolean' } },
  required: ['slug', 'truncated'],
};
export const limits = { memory_mb: 64, timeout_ms: 5000 };
export const permissions = { network: false };
export const examples = [
  {
    input: { title: 'Hello, World!' },
    output: { slug: 'hello-world', truncated: false },
    description: 'punctuation goes',
  },
];

export function execute(input: { title: string; max_length: number }) {
  const full = input.title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const slug =
    full.length > input.max_length ? full.slice(0, input.max_length).replace(/-+$/, '') : full;
  return { slug, truncated: slug !== full };
}

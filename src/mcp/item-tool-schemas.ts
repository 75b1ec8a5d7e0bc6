/**
 * The four tools of the MCP server (seed 001): `search`, `load`, `execute` and `sign`, with its
 * argument names (`item_type`, `item_id`, `project_path`, `parameters`, `dry_run`, `source`,
 * `destination`, `query`, `limit`, `sort_by`, `category`, `tags`, `date_from`, `date_to`) and
 * JSON Schemas. Dirigent adds `offset`, `version`, `space`-like filters and, on `execute`, what
 * answering a waiting run needs (`run_id`, `answer`, `signal`) and `async`.
 */

const ITEM_TYPE = {
  type: 'string',
  enum: ['directive', 'tool', 'knowledge'],
  description: 'What kind of item: a directive (a workflow), a tool, or a knowledge entry.',
} as const;

const ITEM_ID = {
  type: 'string',
  minLength: 1,
  maxLength: 512,
  description:
    'The item id: its path under .ai/<kind>s/ without extension, e.g. "deploy/release". For sign, a glob with * or ? signs every match.',
} as const;

const PROJECT_PATH = {
  type: 'string',
  description:
    'The project (optional): this server serves one project; a different path is refused.',
} as const;

const SPACE = { type: 'string', enum: ['project', 'user', 'system'] } as const;

/** One tool of the server: its name, description and input schema. */
export interface ItemToolSchema {
  name: 'search' | 'load' | 'execute' | 'sign';
  title: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
  annotations: { readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean };
}

/** The four tools, in the order they are listed. */
export const ITEM_TOOLS: readonly ItemToolSchema[] = [
  {
    name: 'search',
    title: 'Search items',
    description:
      'Find directives, tools and knowledge by keywords. Query syntax: words (all must match), AND, OR, NOT or -word, (parentheses), "exact phrase", prefix*, field terms name: title: description: category: tags: content: id:. Typos are forgiven. Results give item_id, kind, space, title, description, score, signature state and whether the item is shadowed.',
    inputSchema: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          maxLength: 1000,
          description: 'Keywords and operators; empty lists everything.',
        },
        item_type: {
          type: 'string',
          enum: ['directive', 'tool', 'knowledge', 'all'],
          default: 'all',
        },
        source: {
          type: 'string',
          enum: ['project', 'user', 'system', 'all'],
          default: 'all',
          description: 'Which space to search.',
        },
        project_path: PROJECT_PATH,
        category: { type: 'string', description: 'Only this category (or one below it).' },
        tags: {
          type: 'array',
          items: { type: 'string' },
          description: 'Only items with all these tags.',
        },
        version: {
          type: 'string',
          description: 'Only versions in this semver range, e.g. ">=1.2 <2".',
        },
        date_from: { type: 'string', description: 'Only items dated on or after (ISO date).' },
        date_to: { type: 'string', description: 'Only items dated on or before (ISO date).' },
        sort_by: { type: 'string', enum: ['score', 'date', 'name'], default: 'score' },
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
        offset: { type: 'integer', minimum: 0, default: 0 },
      },
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'load',
    title: 'Load an item',
    description:
      "Read an item's content (verified first), or copy it into the project or user space with its signature intact (give destination): copying a system tool into the project shadows it there, so it can be changed.",
    inputSchema: {
      type: 'object',
      properties: {
        item_type: ITEM_TYPE,
        item_id: ITEM_ID,
        project_path: PROJECT_PATH,
        source: {
          ...SPACE,
          description: 'Look in this space only (default: project, user, system).',
        },
        destination: {
          type: 'string',
          enum: ['project', 'user'],
          description: 'Copy the item here; omit to only read it.',
        },
      },
      required: ['item_type', 'item_id'],
    },
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  },
  {
    name: 'execute',
    title: 'Execute an item',
    description:
      'Run a tool with parameters, run a directive with parameters as its inputs, or read a knowledge entry. dry_run checks only. A directive that reaches an instruction answers with status "waiting", its run_id and the instruction: do what it asks, then call execute again with the same item_type and item_id, that run_id and your answer to continue the run.',
    inputSchema: {
      type: 'object',
      properties: {
        item_type: ITEM_TYPE,
        item_id: ITEM_ID,
        project_path: PROJECT_PATH,
        parameters: {
          type: 'object',
          default: {},
          description: "A tool's parameters or a directive's inputs, by name.",
        },
        dry_run: { type: 'boolean', default: false, description: 'Validate only; run nothing.' },
        run_id: {
          type: 'string',
          description: 'Answer this waiting run of the directive instead of starting a new one.',
        },
        answer: {
          description:
            "With run_id: the waiting step's answer, a JSON value matching the step's answer_schema when the run gave one (else any JSON value).",
        },
        signal: {
          type: 'string',
          description:
            'With run_id: which waiting step to answer, when several wait (default: the first).',
        },
        async: {
          type: 'boolean',
          default: false,
          description:
            'A directive: answer at once with the run id instead of waiting for it to end.',
        },
      },
      required: ['item_type', 'item_id'],
    },
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  },
  {
    name: 'sign',
    title: 'Validate and sign items',
    description:
      "Validate an item (name matches its file, category its folder, semver version, its format) and sign it with this machine's signing key. item_id may be a glob (* or ?) to sign every match.",
    inputSchema: {
      type: 'object',
      properties: {
        item_type: ITEM_TYPE,
        item_id: ITEM_ID,
        project_path: PROJECT_PATH,
        source: {
          type: 'string',
          enum: ['project', 'user'],
          default: 'project',
          description: 'The space of the items to sign (system items are read-only).',
        },
      },
      required: ['item_type', 'item_id'],
    },
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  },
];

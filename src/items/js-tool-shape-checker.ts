/**
 * The shape checks of a JS/TS tool's metadata fields (strings, schemas, `limits`, `permissions`,
 * `required_secrets`, `examples`), once their literal values are read: each wrong field is a fatal
 * `INVALID_TOOL` naming its path and located at its declaration.
 */
import type { Node } from '@babel/types';
import { closest } from '../errors/did-you-mean.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import { locateNode, type JsonValue } from './js-literal-reader.js';
import type { JsToolExample, JsToolMetadata } from './js-tool-metadata-type.js';

const LIMIT_KEYS = ['memory_mb', 'timeout_ms', 'cpu_percent'];
const PERMISSION_KEYS = ['network'];
/** `host`, `host:port`, `[ipv6]` or `[ipv6]:port`: what Deno's `--allow-net` takes. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks the shape of each field, naming the field path of what is wrong. */
export class JsToolShapeChecker {
  constructor(
    private readonly file: string,
    private readonly values: Map<string, { value: JsonValue; node: Node }>,
  ) {}

  /** The field `name` as a string; undefined when not declared. */
  string(name: string): string | undefined {
    const v = this.values.get(name);
    if (v === undefined) return undefined;
    if (typeof v.value !== 'string') throw this.bad(name, name, 'must be a string', v.value);
    return v.value;
  }

  /** The field `name` as an object (a JSON Schema, `limits`, …); undefined when not declared. */
  object(name: string): Record<string, unknown> | undefined {
    const v = this.values.get(name);
    if (v === undefined) return undefined;
    if (!isObject(v.value)) throw this.bad(name, name, 'must be an object', v.value);
    return v.value;
  }

  /** `limits`: known keys only, each a positive number. */
  limits(): JsToolMetadata['limits'] {
    const limits = this.object('limits') ?? {};
    this.knownKeys('limits', limits, LIMIT_KEYS);
    const positive = (key: string): number | undefined => {
      const n = limits[key];
      if (n === undefined) return undefined;
      if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0)
        throw this.bad('limits', `limits.${key}`, 'must be a positive number', n);
      return n;
    };
    positive('cpu_percent');
    return { memoryMb: positive('memory_mb'), timeoutMs: positive('timeout_ms') };
  }

  /** `permissions.network`: `false` when not declared. */
  network(): boolean | string[] {
    const permissions = this.object('permissions') ?? {};
    this.knownKeys('permissions', permissions, PERMISSION_KEYS);
    const network = permissions.network;
    if (network === undefined) return false;
    if (typeof network === 'boolean') return network;
    const path = 'permissions.network';
    const expected = 'must be true, false or a list of hosts (`host` or `host:port`)';
    if (!Array.isArray(network)) throw this.bad('permissions', path, expected, network);
    return network.map((h, i) => {
      if (typeof h !== 'string' || !HOST.test(h))
        throw this.bad(
          'permissions',
          `${path}[${i}]`,
          'must be a host or host:port, without a scheme or path (e.g. `api.example.com`)',
          h,
        );
      return h;
    });
  }

  /** `required_secrets`: names fit for an environment variable; `[]` when not declared. */
  secrets(): string[] {
    const v = this.values.get('required_secrets');
    if (v === undefined) return [];
    if (!Array.isArray(v.value))
      throw this.bad('required_secrets', 'required_secrets', 'must be a list of names', v.value);
    return v.value.map((s, i) => {
      if (typeof s !== 'string' || !SECRET_NAME.test(s))
        throw this.bad(
          'required_secrets',
          `required_secrets[${i}]`,
          'must be a name of letters, digits and underscores',
          s,
        );
      return s;
    });
  }

  /** `examples`: each an object with an object `input`; `[]` when not declared. */
  examples(): JsToolExample[] {
    const v = this.values.get('examples');
    if (v === undefined) return [];
    if (!Array.isArray(v.value))
      throw this.bad(
        'examples',
        'examples',
        'must be a list of { input, output, description }',
        v.value,
      );
    return v.value.map((ex, i) => {
      if (!isObject(ex) || !isObject(ex.input))
        throw this.bad(
          'examples',
          `examples[${i}]`,
          'must be an object with an object `input`',
          ex,
        );
      if (ex.description !== undefined && typeof ex.description !== 'string')
        throw this.bad(
          'examples',
          `examples[${i}].description`,
          'must be a string',
          ex.description,
        );
      return {
        input: ex.input,
        ...(ex.output !== undefined && { output: ex.output }),
        ...(typeof ex.description === 'string' && { description: ex.description }),
      };
    });
  }

  private knownKeys(name: string, obj: Record<string, unknown>, known: string[]): void {
    for (const key of Object.keys(obj)) {
      if (known.includes(key)) continue;
      const guess = closest(key, known);
      throw DirigentError.fatal(
        ErrorCode.INVALID_TOOL,
        `JS tool ${this.file}: \`${name}.${key}\` is not a known field${guess ? ` (did you mean \`${guess}\`?)` : ''}.`,
        {
          location: locateNode(this.file, this.values.get(name)!.node),
          hint: `${name} may hold ${known.join(', ')}.`,
          details: { path: `${name}.${key}` },
        },
      );
    }
  }

  private bad(name: string, path: string, expected: string, got: unknown): DirigentError {
    return DirigentError.fatal(
      ErrorCode.INVALID_TOOL,
      `JS tool ${this.file}: \`${path}\` ${expected}, not ${JSON.stringify(got)}.`,
      { location: locateNode(this.file, this.values.get(name)!.node), details: { path } },
    );
  }
}

function isObject(v: unknown): v is Record<string, JsonValue> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

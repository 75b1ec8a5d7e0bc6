/**
 * The static side of reading a JS/TS tool: the top-level declarations of a parsed module, and the
 * evaluation of those that are literal constants into JSON values, without running any code.
 * What is not a literal fails as a fatal `INVALID_TOOL` located at its `file:line:column`.
 */
import type { Expression, Node, Statement } from '@babel/types';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';

/** A JSON value, as the literal constants of a tool evaluate to. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [k: string]: JsonValue };

/** A top-level declaration: its initialiser (if any) and whether it is a `const`. */
export interface TopLevelBinding {
  node: Node;
  init: Expression | null | undefined;
  constant: boolean;
}

/** Top-level bindings by local name, and exported names to their local names. */
export function topLevelBindings(body: Statement[]): {
  bindings: Map<string, TopLevelBinding>;
  exported: Map<string, string>;
} {
  const bindings = new Map<string, TopLevelBinding>();
  const exported = new Map<string, string>();
  const declare = (decl: Node | null | undefined, isExport: boolean) => {
    if (!decl) return;
    if (decl.type === 'VariableDeclaration') {
      for (const d of decl.declarations) {
        if (d.id.type !== 'Identifier') continue;
        bindings.set(d.id.name, { node: d, init: d.init, constant: decl.kind === 'const' });
        if (isExport) exported.set(d.id.name, d.id.name);
      }
    } else if (
      (decl.type === 'FunctionDeclaration' || decl.type === 'ClassDeclaration') &&
      decl.id
    ) {
      bindings.set(decl.id.name, { node: decl, init: undefined, constant: false });
      if (isExport) exported.set(decl.id.name, decl.id.name);
    }
  };
  for (const stmt of body) {
    if (stmt.type === 'ExportNamedDeclaration') {
      declare(stmt.declaration, true);
      if (stmt.source) continue; // re-exports from another module: not read
      for (const s of stmt.specifiers) {
        if (s.type !== 'ExportSpecifier') continue;
        const name = s.exported.type === 'Identifier' ? s.exported.name : s.exported.value;
        exported.set(name, s.local.name);
      }
    } else {
      declare(stmt, false);
    }
  }
  return { bindings, exported };
}

/** Evaluates literal expressions, naming and locating the first part that is not one. */
export class JsLiteralReader {
  private readonly evaluating = new Set<string>();
  constructor(
    private readonly file: string,
    private readonly bindings: Map<string, TopLevelBinding>,
  ) {}

  /** The value of the top-level constant `local`, read for the export `name` at `path`. */
  binding(local: string, name: string, path = name): JsonValue | undefined {
    const b = this.bindings.get(local);
    if (b === undefined) return undefined;
    if (b.init === undefined || b.init === null) {
      if (b.node.type === 'VariableDeclarator')
        throw this.notLiteral(name, path, b.node, 'a declaration without a value');
      throw this.notLiteral(name, path, b.node, article(describeNode(b.node)));
    }
    if (!b.constant)
      throw this.notLiteral(
        name,
        path,
        b.node,
        'not a const',
        `Declare it as \`const ${local} = …\`.`,
      );
    if (this.evaluating.has(local))
      throw this.notLiteral(name, path, b.node, 'defined in terms of itself');
    this.evaluating.add(local);
    try {
      return this.value(b.init, name, path);
    } finally {
      this.evaluating.delete(local);
    }
  }

  private value(node: Node, name: string, path: string): JsonValue {
    switch (node.type) {
      case 'StringLiteral':
      case 'NumericLiteral':
      case 'BooleanLiteral':
        return node.value;
      case 'NullLiteral':
        return null;
      case 'TemplateLiteral':
        if (node.expressions.length > 0)
          throw this.notLiteral(name, path, node, 'a template literal with `${…}` expressions');
        return node.quasis.map((q) => q.value.cooked ?? q.value.raw).join('');
      case 'UnaryExpression':
        if (
          (node.operator === '-' || node.operator === '+') &&
          node.argument.type === 'NumericLiteral'
        )
          return node.operator === '-' ? -node.argument.value : node.argument.value;
        break;
      case 'TSAsExpression':
      case 'TSSatisfiesExpression':
      case 'TSNonNullExpression':
      case 'TSTypeAssertion':
      case 'ParenthesizedExpression':
        return this.value(node.expression, name, path);
      case 'Identifier': {
        const b = this.bindings.get(node.name);
        if (b !== undefined && b.constant && b.init) return this.binding(node.name, name, path)!;
        break;
      }
      case 'ArrayExpression': {
        const out: JsonValue[] = [];
        node.elements.forEach((el, i) => {
          if (el === null)
            throw this.notLiteral(name, `${path}[${i}]`, node, 'an array with a hole');
          if (el.type === 'SpreadElement') {
            const spread = this.value(el.argument, name, `${path}[${i}]`);
            if (!Array.isArray(spread))
              throw this.notLiteral(
                name,
                `${path}[${i}]`,
                el,
                'a spread of something not an array',
              );
            out.push(...spread);
          } else out.push(this.value(el, name, `${path}[${i}]`));
        });
        return out;
      }
      case 'ObjectExpression': {
        const out: { [k: string]: JsonValue } = {};
        for (const prop of node.properties) {
          if (prop.type === 'SpreadElement') {
            const spread = this.value(prop.argument, name, path);
            if (spread === null || typeof spread !== 'object' || Array.isArray(spread))
              throw this.notLiteral(name, path, prop, 'a spread of something not an object');
            Object.assign(out, spread);
            continue;
          }
          const key = propertyKey(prop);
          if (key === undefined) throw this.notLiteral(name, path, prop, `a ${describeNode(prop)}`);
          const at = /^[A-Za-z_$][\w$]*$/.test(key)
            ? `${path}.${key}`
            : `${path}[${JSON.stringify(key)}]`;
          // Defined like this so that a key `__proto__` stays an own data property.
          Object.defineProperty(out, key, {
            value: this.value((prop as { value: Node }).value, name, at),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        return out;
      }
    }
    throw this.notLiteral(name, path, node, article(describeNode(node)));
  }

  private notLiteral(
    name: string,
    path: string,
    node: Node,
    what: string,
    hint?: string,
  ): DirigentError {
    const where = path === name ? '' : ` (at ${path})`;
    return DirigentError.fatal(
      ErrorCode.INVALID_TOOL,
      `JS tool ${this.file}: export \`${name}\` is not a literal${where}: it is ${what}.`,
      {
        location: locateNode(this.file, node),
        hint:
          hint ??
          'Metadata is read without running the tool: write it out with strings, numbers, booleans, null, arrays and objects.',
        details: { export: name, path },
      },
    );
  }
}

/** The key of a plain `key: value` object property, or undefined for methods, getters, computed keys. */
function propertyKey(prop: Node): string | undefined {
  if (prop.type !== 'ObjectProperty') return undefined;
  if (prop.computed) return prop.key.type === 'StringLiteral' ? prop.key.value : undefined;
  if (prop.key.type === 'Identifier') return prop.key.name;
  if (prop.key.type === 'StringLiteral') return prop.key.value;
  if (prop.key.type === 'NumericLiteral') return String(prop.key.value);
  return undefined;
}

/** `CallExpression` → `call expression`. */
function describeNode(node: Node): string {
  if (node.type === 'ObjectMethod') return 'method';
  if (node.type === 'ObjectProperty') return 'computed property';
  if (node.type === 'Identifier') return `reference to \`${node.name}\``;
  return node.type
    .replace(/^TS/, 'TypeScript')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/\b(?!TypeScript)[A-Z]/g, (c) => c.toLowerCase());
}

/** `call expression` → `a call expression`, `arrow function expression` → `an arrow …`. */
function article(what: string): string {
  return /^[aeiou]/.test(what) ? `an ${what}` : `a ${what}`;
}

/** Where `node` starts in `file`, as a 1-based `file:line:column`. */
export function locateNode(file: string, node: Node): SourceLocation {
  return { file, line: node.loc?.start.line ?? 1, column: (node.loc?.start.column ?? 0) + 1 };
}

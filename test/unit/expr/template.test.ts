import { thrown } from '../../support/thrown.js';
import { describe, expect, it } from 'vitest';
import { DirigentError, ErrorCode } from '../../../src/errors/index.js';
import {
  compileTemplate,
  hasTemplate,
  interpolateDeep,
  type Scope,
} from '../../../src/expr/index.js';

const scope: Scope = {
  inputs: { name: 'world', count: 3, tags: ['a', 'b'], flag: false, nothing: null },
  state: {
    count: 2,
    files: [
      { path: 'a.txt', size: 10 },
      { path: 'b.txt', size: 20 },
    ],
  },
  steps: { build: { status: 'completed', result: { stdout: '42\n', code: 0 } } },
  result: { stdout: 'ok\n', items: [1, 2, 3] },
  error: { code: 'TOOL_FAILED', message: 'boom', retryable: true },
  env: { HOME: '/home/me', EMPTY: '' },
  vars: { item: { name: 'x', n: 7 }, item_index: 0 },
};

const run = (text: string, s: Scope = scope): unknown => compileTemplate(text).evaluate(s);

describe('text without templates', () => {
  it('compiles to a constant', () => {
    const t = compileTemplate('just text { with braces } and $ signs');
    expect(t.isWhole).toBe(false);
    expect(t.refs).toEqual([]);
    expect(t.evaluate(scope)).toBe('just text { with braces } and $ signs');
  });

  it('is recognised by hasTemplate', () => {
    expect(hasTemplate('plain {json: 1}')).toBe(false);
    expect(hasTemplate('a ${state.x}')).toBe(true);
    expect(hasTemplate('{input:x}')).toBe(true);
    expect(hasTemplate('{env:HOME}')).toBe(true);
  });

  it('is cached: the same text compiles to the same object', () => {
    expect(compileTemplate('${state.count}')).toBe(compileTemplate('${state.count}'));
  });
});

describe('RYE input templates', () => {
  it('{input:name} reads scope.inputs', () => {
    expect(run('{input:name}')).toBe('world');
    expect(run('Hello {input:name}!')).toBe('Hello world!');
  });

  it('{input:name:default} uses the default (colons allowed) only when the input is missing', () => {
    expect(run('{input:name:nobody}')).toBe('world');
    expect(run('{input:missing:http://x:8080/a}')).toBe('http://x:8080/a');
    expect(run('{input:missing:}')).toBe('');
    expect(run('{input:nothing:fallback}')).toBe('fallback');
  });

  it('{input:name|default} is the pipe form of the default', () => {
    expect(run('{input:missing|plan b}')).toBe('plan b');
    expect(run('{input:name|plan b}')).toBe('world');
  });

  it('{input:name?} is undefined when whole and empty inside text', () => {
    expect(run('{input:missing?}')).toBeUndefined();
    expect(run('[{input:missing?}]')).toBe('[]');
    expect(run('{input:name?}')).toBe('world');
  });

  it('{input:name} for a missing input throws TEMPLATE_PATH_MISSING listing the inputs', () => {
    const err = thrown(() => run('{input:nme}'));
    expect(err.code).toBe(ErrorCode.TEMPLATE_PATH_MISSING);
    expect(err.retryable).toBe(false);
    expect(err.message).toBe(
      '{input:nme}: "nme" is not set in inputs (it has: name, count, tags, flag, nothing)',
    );
    expect(err.hint).toContain('Did you mean "name"?');
  });

  it('keeps the type of a whole {input:x}', () => {
    expect(run('{input:count}')).toBe(3);
    expect(run('{input:tags}')).toEqual(['a', 'b']);
    expect(run('{input:flag}')).toBe(false);
  });
});

describe('${path} templates', () => {
  it('read every root: inputs, state, steps, result, error, env and loop variables', () => {
    expect(run('${inputs.name}')).toBe('world');
    expect(run('${state.count}')).toBe(2);
    expect(run('${steps.build.result.stdout}')).toBe('42\n');
    expect(run('${result.stdout}')).toBe('ok\n');
    expect(run('${error.message}')).toBe('boom');
    expect(run('${env.HOME}')).toBe('/home/me');
    expect(run('${item.name}')).toBe('x');
    expect(run('${item_index}')).toBe(0);
  });

  it('index arrays with numeric segments', () => {
    expect(run('${state.files.0.path}')).toBe('a.txt');
    expect(run('${state.files.1.size}')).toBe(20);
    expect(run('${result.items.2}')).toBe(3);
  });

  it('keep the value type when the template is the whole string', () => {
    const t = compileTemplate('${state.files}');
    expect(t.isWhole).toBe(true);
    expect(t.evaluate(scope)).toBe((scope.state as { files: unknown }).files);
    expect(run('${result.items}')).toEqual([1, 2, 3]);
    expect(run('${inputs.nothing}')).toBeNull();
    expect(run('${ state.count }')).toBe(2);
  });

  it('become strings inside other text', () => {
    const t = compileTemplate('n=${state.count}');
    expect(t.isWhole).toBe(false);
    expect(t.evaluate(scope)).toBe('n=2');
    expect(run('items: ${result.items}')).toBe('items: [1,2,3]');
    expect(run('file: ${state.files.0}')).toBe('file: {"path":"a.txt","size":10}');
    expect(run('null:${inputs.nothing}|flag:${inputs.flag}')).toBe('null:|flag:false');
    expect(run(' ${state.count}')).toBe(' 2');
    expect(run('${state.count}${state.count}')).toBe('22');
  });

  it('${path?} gives undefined when whole and "" in text for a missing path', () => {
    expect(run('${state.missing?}')).toBeUndefined();
    expect(run('${state.files.9.path?}')).toBeUndefined();
    expect(run('x${state.missing?}y')).toBe('xy');
    expect(run('${state.count?}')).toBe(2);
  });

  it('${a || b} takes the first path that exists and is not null', () => {
    expect(run('${state.missing || inputs.name}')).toBe('world');
    expect(run('${inputs.nothing || state.count}')).toBe(2);
    expect(run('${state.count || inputs.name}')).toBe(2);
    expect(run('${state.a || state.b || state.files.1.path}')).toBe('b.txt');
  });

  it('${a || b} is optional when an alternative ends in ?', () => {
    expect(run('${state.a? || state.b}')).toBeUndefined();
    expect(run('${state.a || state.b?}')).toBeUndefined();
    expect(run('${state.a || inputs.nothing}')).toBeNull();
  });

  it('${a || b} with every alternative missing names each miss', () => {
    const err = thrown(() => run('${state.a || inputs.b}'));
    expect(err.code).toBe(ErrorCode.TEMPLATE_PATH_MISSING);
    expect(err.message).toContain('"a" is not set in state');
    expect(err.message).toContain('"b" is not set in inputs');
  });

  it('a missing path names the template, the path and the keys that exist', () => {
    const err = thrown(() => run('count: ${state.cnt}'));
    expect(err).toBeInstanceOf(DirigentError);
    expect(err.code).toBe(ErrorCode.TEMPLATE_PATH_MISSING);
    expect(err.retryable).toBe(false);
    expect(err.message).toBe('${state.cnt}: "cnt" is not set in state (it has: count, files)');
    expect(err.hint).toContain('Did you mean "count"?');
  });

  it('a miss deep in a path reports the deepest level reached', () => {
    expect(thrown(() => run('${steps.build.result.out}')).message).toBe(
      '${steps.build.result.out}: "out" is not set in steps.build.result (it has: stdout, code)',
    );
    expect(thrown(() => run('${state.files.5.path}')).message).toBe(
      '${state.files.5.path}: "5" is not set in state.files (it is an array of 2 items)',
    );
  });

  it('an unknown root lists the names that are known', () => {
    const err = thrown(() => run('${input.name}'));
    expect(err.message).toBe(
      '${input.name}: "input" is not a known name (known: inputs, state, steps, result, error, env, item, item_index)',
    );
    expect(err.hint).toContain('Did you mean "inputs"?');
  });

  it('an unset result outside a step is a miss', () => {
    const err = thrown(() => run('${result.x}', { inputs: {}, state: {}, steps: {} }));
    expect(err.message).toBe('${result.x}: "result" is not set here');
  });

  it('$${ writes a literal ${ (for shell text)', () => {
    expect(run('echo $${HOME} ${inputs.name}')).toBe('echo ${HOME} world');
    expect(run('$${x}')).toBe('${x}');
  });
});

describe('env templates', () => {
  it('{env:VAR} and {env:VAR:default}', () => {
    expect(run('{env:HOME}/bin')).toBe('/home/me/bin');
    expect(run('{env:EMPTY}')).toBe('');
    expect(run('{env:NOPE:/tmp}')).toBe('/tmp');
    expect(run('{env:HOME:/tmp}')).toBe('/home/me');
  });

  it('a missing variable throws without listing the environment', () => {
    const err = thrown(() => run('{env:NOPE}'));
    expect(err.code).toBe(ErrorCode.TEMPLATE_PATH_MISSING);
    expect(err.message).toBe('{env:NOPE}: environment variable "NOPE" is not set');
    expect(err.message).not.toContain('HOME');
    expect(err.hint).toContain('{env:VAR:default}');
    expect(thrown(() => run('{env:HOME}', { inputs: {}, state: {}, steps: {} })).code).toBe(
      ErrorCode.TEMPLATE_PATH_MISSING,
    );
  });
});

describe('malformed templates', () => {
  it.each([
    ['${state.x', 'invalid template ${state.x: the "${" that starts it is never closed with "}"'],
    [
      'abc ${state.x',
      'invalid template ${state.x: the "${" that starts it is never closed with "}"',
    ],
    ['a ${}', 'the path is empty'],
    ['${ ? }', 'the path is empty'],
    ['${state.x || }', 'the path is empty'],
    ['${1abc}', '"1abc" is not a name'],
    ['${#arr[@]}', 'is not a name'],
    ['${state..x}', 'is not a valid path segment'],
    ['${state.a b}', 'is not a valid path segment'],
    ['{input:}', 'expected {input:name}'],
    ['{input:a b}', 'expected {input:name}'],
    [
      '{input:name',
      'invalid template {input:name: the "{" that starts it is never closed with "}"',
    ],
    ['{env:A.B}', 'is not a variable name'],
  ])('%s throws INVALID_TEMPLATE at compile time', (text, reason) => {
    const err = thrown(() => compileTemplate(text));
    expect(err.code).toBe(ErrorCode.INVALID_TEMPLATE);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain(reason);
  });
});

describe('refs', () => {
  it('lists every path read, with its root and whether a miss is allowed', () => {
    const t = compileTemplate(
      '{input:a} {input:b?} {input:c:d} ${state.x.0} ${item.y?} ${state.p || steps.q.result} {env:E}',
    );
    expect(t.refs).toEqual([
      { root: 'inputs', path: ['a'], optional: false, raw: '{input:a}' },
      { root: 'inputs', path: ['b'], optional: true, raw: '{input:b?}' },
      { root: 'inputs', path: ['c'], optional: true, raw: '{input:c:d}' },
      { root: 'state', path: ['x', '0'], optional: false, raw: '${state.x.0}' },
      { root: 'item', path: ['y'], optional: true, raw: '${item.y?}' },
      { root: 'state', path: ['p'], optional: true, raw: '${state.p || steps.q.result}' },
      {
        root: 'steps',
        path: ['q', 'result'],
        optional: false,
        raw: '${state.p || steps.q.result}',
      },
      { root: 'env', path: ['E'], optional: false, raw: '{env:E}' },
    ]);
  });
});

describe('interpolateDeep', () => {
  it('interpolates every string inside arrays and objects, keeping whole-template types', () => {
    const params = {
      path: '${state.files.0.path}',
      sizes: ['${state.files.0.size}', 'n=${state.count}'],
      nested: { who: 'hello {input:name}', n: 5, ok: true, none: null },
      '${state.count}': 'keys stay as they are',
    };
    expect(interpolateDeep(params, scope)).toEqual({
      path: 'a.txt',
      sizes: [10, 'n=2'],
      nested: { who: 'hello world', n: 5, ok: true, none: null },
      '${state.count}': 'keys stay as they are',
    });
  });

  it('does not modify its argument', () => {
    const params = { a: ['${state.count}'] };
    interpolateDeep(params, scope);
    expect(params).toEqual({ a: ['${state.count}'] });
  });
});

import { describe, expect, it } from 'vitest';
import { DirigentError, ErrorCode } from '../../../src/errors/index.js';
import {
  BUILTIN_TOOLS,
  BuiltinDispatcher,
  DEFAULT_RETRY_POLICY,
  type ToolDefinition,
} from '../../../src/tools/index.js';
import { makeCall, rejection } from './helpers.js';

const dispatcher = new BuiltinDispatcher();

describe('BuiltinDispatcher', () => {
  it('runs dirigent/util/echo, which returns its params', async () => {
    const params = { a: 1, b: ['x'], c: { d: true } };
    await expect(dispatcher.dispatch(makeCall('dirigent/util/echo', params))).resolves.toBe(params);
  });

  it('coerces params to the schema ("10" → 10) and fills defaults', async () => {
    const tool: ToolDefinition = {
      itemId: 'test/util/probe',
      description: 'returns its params',
      paramsSchema: {
        type: 'object',
        properties: {
          count: { type: 'integer' },
          flag: { type: 'boolean' },
          mode: { type: 'string', default: 'fast' },
        },
      },
      execute: (params) => params,
    };
    const result = await new BuiltinDispatcher([tool]).dispatch(
      makeCall('test/util/probe', { count: '10', flag: 'true' }),
    );
    expect(result).toEqual({ count: 10, flag: true, mode: 'fast' });
  });

  it('lists every failing path of invalid params in one fatal INVALID_PARAMS', async () => {
    const err = await rejection(
      dispatcher.dispatch(makeCall('dirigent/shell/bash', { timeout: 'soon', comand: 'ls' })),
    );
    expect(err.code).toBe(ErrorCode.INVALID_PARAMS);
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/^params of dirigent\/shell\/bash are invalid: /);
    expect(err.message).toContain('/timeout must be integer');
    expect(err.message).toContain('/command is required');
    expect(err.message).toContain('/comand is not allowed (did you mean "command"?)');
  });

  it('folds an alias (file_path or path) into one readable reason', async () => {
    const err = await rejection(dispatcher.dispatch(makeCall('dirigent/fs/read', {})));
    expect(err.code).toBe(ErrorCode.INVALID_PARAMS);
    expect(err.message).toBe(
      'params of dirigent/fs/read are invalid: one of /file_path, /path is required',
    );
  });

  it('rejects an unknown tool with a did-you-mean and the available tools', async () => {
    const err = await rejection(dispatcher.dispatch(makeCall('dirigent/util/ecko', {})));
    expect(err.code).toBe(ErrorCode.UNKNOWN_TOOL);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('Did you mean "dirigent/util/echo"?');
    for (const tool of BUILTIN_TOOLS) expect(err.hint).toContain(tool.itemId);
    expect(dispatcher.describe('dirigent/util/ecko')).toBeUndefined();
  });

  it('rejects with CANCELLED, without running the tool, when the signal is already aborted', async () => {
    let ran = false;
    const tool: ToolDefinition = {
      itemId: 'test/util/mark',
      description: '',
      paramsSchema: { type: 'object' },
      execute: () => (ran = true),
    };
    const controller = new AbortController();
    controller.abort();
    const err = await rejection(
      new BuiltinDispatcher([tool]).dispatch(
        makeCall('test/util/mark', {}, { signal: controller.signal }),
      ),
    );
    expect(err.code).toBe(ErrorCode.CANCELLED);
    expect(ran).toBe(false);
  });

  it('turns anything but a DirigentError thrown by a tool into a fatal TOOL_FAILED', async () => {
    const tools: ToolDefinition[] = [
      {
        itemId: 'test/x/sync',
        description: '',
        paramsSchema: {},
        execute: () => {
          throw new Error('boom');
        },
      },
      {
        itemId: 'test/x/async',
        description: '',
        paramsSchema: {},
        execute: () => Promise.reject(new TypeError('bad')),
      },
      {
        itemId: 'test/x/own',
        description: '',
        paramsSchema: {},
        execute: () => Promise.reject(DirigentError.retryable(ErrorCode.COMMAND_FAILED, 'flaky')),
      },
    ];
    const d = new BuiltinDispatcher(tools);
    const sync = await rejection(d.dispatch(makeCall('test/x/sync', {})));
    expect([sync.code, sync.retryable, sync.message]).toEqual([
      ErrorCode.TOOL_FAILED,
      false,
      'tool test/x/sync failed: boom',
    ]);
    const async = await rejection(d.dispatch(makeCall('test/x/async', {})));
    expect([async.code, async.message]).toEqual([
      ErrorCode.TOOL_FAILED,
      'tool test/x/async failed: bad',
    ]);
    const own = await rejection(d.dispatch(makeCall('test/x/own', {})));
    expect([own.code, own.retryable]).toEqual([ErrorCode.COMMAND_FAILED, true]);
  });

  it('describes a tool with its retry policy, defaults applied', () => {
    const d = new BuiltinDispatcher([
      {
        itemId: 'test/x/retry',
        description: 'd',
        paramsSchema: {},
        retry: { attempts: 5, delayMs: undefined },
        execute: () => null,
      },
    ]);
    expect(d.describe('test/x/retry')).toEqual({
      itemId: 'test/x/retry',
      description: 'd',
      paramsSchema: {},
      retry: { ...DEFAULT_RETRY_POLICY, attempts: 5 },
    });
    expect(dispatcher.describe('dirigent/shell/bash')?.retry).toEqual(DEFAULT_RETRY_POLICY);
  });

  it('refuses duplicate item ids and invalid schemas at construction', () => {
    const echo = BUILTIN_TOOLS[0]!;
    expect(() => new BuiltinDispatcher([echo, echo])).toThrow(/defined twice/);
    expect(() => new BuiltinDispatcher([{ ...echo, paramsSchema: { type: 'nonsense' } }])).toThrow(
      /params schema of tool dirigent\/util\/echo is invalid/,
    );
  });

  it("compiles the built-ins' params schemas on their first call; each one compiles", () => {
    const bad = [{ ...BUILTIN_TOOLS[0]!, paramsSchema: { type: 'nonsense' } }];
    expect(() => new BuiltinDispatcher(bad, { compileEagerly: false })).not.toThrow();
    expect(() => new BuiltinDispatcher(BUILTIN_TOOLS, { compileEagerly: true })).not.toThrow();
  });

  it('keeps up with the engine benchmark (well over 50,000 echo calls per second)', async () => {
    const params = { x: 1 };
    const call = makeCall('dirigent/util/echo', params);
    const n = 50_000;
    const start = performance.now();
    for (let i = 0; i < n; i++) await dispatcher.dispatch(call);
    const perSecond = n / ((performance.now() - start) / 1000);
    expect(perSecond).toBeGreaterThan(50_000);
  });
});

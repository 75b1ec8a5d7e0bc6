/**
 * The named error constructors of src/errors, read as a specification: each gives its stable
 * code, whether trying again may help, a message that names what went wrong and where, and a
 * hint that says how to fix it.
 */
import { describe, expect, it } from 'vitest';
import { DirigentError } from '../../../src/errors/dirigent-error.js';
import { ErrorCode } from '../../../src/errors/error-codes.js';
import {
  lockLost,
  lockUnavailable,
  needsRedis,
  redisUnavailable,
} from '../../../src/errors/deployment-errors.js';
import { xmlTooDeep } from '../../../src/errors/directive-errors.js';
import {
  binaryFile,
  cannotRead,
  fileNotFound,
  fileTooLarge,
  notAFile,
  notAFolder,
} from '../../../src/errors/file-errors.js';
import {
  itemNotFound,
  itemNotFoundCode,
  noSuchSpace,
  notAnItemKind,
  systemSpaceReadOnly,
  toolDoesNotParse,
  toolMissingFields,
  toolYamlInvalid,
  unknownTool,
} from '../../../src/errors/item-errors.js';
import { badOptionValue, noRoute, unauthorized } from '../../../src/errors/request-errors.js';
import {
  invalidPayload,
  runEnded,
  runNotFound,
  runNotWaiting,
} from '../../../src/errors/run-errors.js';
import {
  cannotStart,
  hostCrashed,
  missingSecrets,
  paramsNotJson,
  programNotFound,
  requestFailed,
} from '../../../src/errors/runtime-errors.js';
import { keyNotEd25519, keyNotReadable, keysNotAPair } from '../../../src/errors/signing-errors.js';
import { callTimedOut, cancelled, stepTimedOut } from '../../../src/errors/stop-errors.js';

/** Every constructed error: a DirigentError with a code, a message and a hint. */
function expectActionable(err: DirigentError, code: ErrorCode, retryable = false): void {
  expect(err).toBeInstanceOf(DirigentError);
  expect(err.code).toBe(code);
  expect(err.retryable).toBe(retryable);
  expect(err.message).toMatch(/\S/);
  expect(err.hint, `${code} says how to fix it`).toMatch(/\S/);
}

describe('run errors', () => {
  it('runNotFound names the id, and where the runs of the deployment are kept', () => {
    const embedded = runNotFound('r-1', 'embedded');
    expectActionable(embedded, ErrorCode.RUN_NOT_FOUND);
    expect(embedded.message).toBe('No run with id r-1.');
    expect(embedded.hint).toContain('.dirigent/runs/');
    expect(embedded.details).toEqual({ runId: 'r-1' });
    expect(runNotFound('r-1', 'redis').hint).toContain('retention period');
    expect(runNotFound('r-1').hint).toContain('dirigent runs');
  });

  it('runEnded names the run and the status it ended with', () => {
    const err = runEnded('r-2', 'completed');
    expectActionable(err, ErrorCode.RUN_ENDED);
    expect(err.message).toBe('Run r-2 has ended (completed); there is nothing to cancel.');
    expect(err.hint).toContain('dirigent status r-2');
    expect(err.details).toEqual({ runId: 'r-2', status: 'completed' });
  });

  it('runNotWaiting says what was asked of the run, and why it stopped waiting', () => {
    const signal = runNotWaiting('r-3', 'failed', 'signal', { message: 'boom' });
    expectActionable(signal, ErrorCode.RUN_NOT_WAITING);
    expect(signal.message).toBe('Run r-3 is failed (boom): it no longer waits for signals.');
    expect(runNotWaiting('r-3', 'completed', 'answer').message).toBe(
      'Run r-3 is completed: nothing in it waits for an answer.',
    );
    expect(runNotWaiting('r-3', 'running', 'resume').message).toContain(
      'only a waiting run can be resumed',
    );
    expect(runNotWaiting('r-3', 'completed', 'resume-interrupted').message).toContain(
      'only a running or waiting run can be resumed',
    );
  });

  it('invalidPayload lists every problem, says the run still waits, and shows an answer that fits', () => {
    const problems = ['missing required field "approved"', 'field "note" must be a string, got 3'];
    const err = invalidPayload(
      { runId: 'r-4', step: 'review', signal: 'review' },
      problems,
      'an object with approved (boolean, required) and note (string)',
      { approved: true, note: '…' },
    );
    expectActionable(err, ErrorCode.INVALID_PAYLOAD);
    expect(err.message).toBe(
      'Signal "review" to run r-4 was refused: missing required field "approved"; field "note" must be a string, got 3. The run still waits for it.',
    );
    expect(err.hint).toBe(
      'Step "review" is answered with an object with approved (boolean, required) and note (string), e.g. {"approved":true,"note":"…"}.',
    );
    expect(err.details).toEqual({ runId: 'r-4', step: 'review', signal: 'review', problems });
  });
});

describe('stopped work', () => {
  it('cancelled says what was cancelled and, when known, by what', () => {
    const err = cancelled('python tool a/b', 'the Python host pool is closed');
    expect(err.code).toBe(ErrorCode.CANCELLED);
    expect(err.retryable).toBe(false);
    expect(err.message).toBe('python tool a/b was cancelled: the Python host pool is closed.');
    expect(cancelled('Step "deploy"').message).toBe('Step "deploy" was cancelled.');
    const reason = new Error('aborted');
    expect(cancelled('The work', undefined, reason).cause).toBe(reason);
  });

  it('stepTimedOut names the step and its timeout, and says in the message how to raise it', () => {
    const err = stepTimedOut('wait', {
      timeoutMs: 1000,
      location: { file: 'd.md', line: 3, column: 5 },
    });
    expectActionable(err, ErrorCode.STEP_TIMEOUT, true);
    expect(err.message).toBe(
      'Step "wait" ran longer than its timeout of 1s; raise <timeout seconds="…"> if it needs longer.',
    );
    expect(err.location).toEqual({ file: 'd.md', line: 3, column: 5 });
    expect(stepTimedOut('hang', { stoppedBy: 'the worker running its tool' }).message).toBe(
      'Step "hang" ran past the deadline of its <timeout>, and the worker running its tool stopped it; raise <timeout seconds="…"> if it needs longer.',
    );
  });

  it('callTimedOut names the call and how long it had, in seconds', () => {
    const err = callTimedOut('MCP tool "slow" on server "fixture"', 300);
    expectActionable(err, ErrorCode.STEP_TIMEOUT, true);
    expect(err.message).toBe('MCP tool "slow" on server "fixture" timed out after 0.3 s.');
    expect(callTimedOut('x', 1000, { hint: 'Raise config.timeout.' }).hint).toBe(
      'Raise config.timeout.',
    );
  });
});

describe('deployment errors', () => {
  it('redisUnavailable is fatal for a client, which could run embedded, retryable for a worker', () => {
    const client = redisUnavailable('redis://***@db:6379', 'client');
    expectActionable(client, ErrorCode.REDIS_UNAVAILABLE);
    expect(client.message).toContain('Redis at redis://***@db:6379 does not answer');
    expect(client.hint).toContain('embedded');
    const worker = redisUnavailable('redis://db:6379', 'worker');
    expectActionable(worker, ErrorCode.REDIS_UNAVAILABLE, true);
    expect(worker.hint).toContain('redis-server');
  });

  it('needsRedis names what needs a deployment and why', () => {
    const err = needsRedis('Scheduling runs', 'the workers of a deployment fire schedules');
    expectActionable(err, ErrorCode.NEEDS_REDIS);
    expect(err.message).toBe(
      'Scheduling runs needs a Redis deployment: the workers of a deployment fire schedules.',
    );
    expect(err.hint).toContain('REDIS_URL');
  });

  it('lockUnavailable and lockLost name the lock, and are retryable', () => {
    const down = lockUnavailable(
      "Could not ask Redis for the rate limit 'k'",
      'k',
      new Error('ECONNREFUSED'),
    );
    expectActionable(down, ErrorCode.LOCK_UNAVAILABLE, true);
    expect(down.message).toBe("Could not ask Redis for the rate limit 'k': ECONNREFUSED");
    const lost = lockLost("the concurrency lock 'k'", 'its lease could not be renewed', {
      key: 'k',
      leaseMs: 500,
    });
    expectActionable(lost, ErrorCode.LOCK_LOST, true);
    expect(lost.message).toBe("Lost the concurrency lock 'k': its lease could not be renewed.");
    expect(lost.details).toEqual({ key: 'k', leaseMs: 500 });
  });
});

describe('item errors', () => {
  it('itemNotFound gives the code of the kind, and says where it looked', () => {
    expect(itemNotFoundCode('directive')).toBe(ErrorCode.UNKNOWN_DIRECTIVE);
    expect(itemNotFoundCode('tool')).toBe(ErrorCode.UNKNOWN_TOOL);
    expect(itemNotFoundCode('knowledge')).toBe(ErrorCode.UNKNOWN_KNOWLEDGE);
    const err = itemNotFound('knowledge', 'notes/none', { hint: 'Looked in project (/p/.ai).' });
    expectActionable(err, ErrorCode.UNKNOWN_KNOWLEDGE);
    expect(err.message).toBe('No knowledge "notes/none" in any space.');
    expect(err.details).toEqual({ itemId: 'notes/none', kind: 'knowledge' });
    const pattern = itemNotFound('tool', 'x/*', {
      in: 'the project space',
      pattern: true,
      hint: 'Looked under /p/.ai/tools.',
    });
    expect(pattern.message).toBe('No tool in the project space matches "x/*".');
  });

  it('unknownTool guesses the tool meant, and lists the tools in the hint', () => {
    const err = unknownTool('util/ecko', ['util/echo', 'util/sleep'], {
      why: 'not a built-in tool, and no space holds it',
      knownAs: 'Built-in tools',
    });
    expectActionable(err, ErrorCode.UNKNOWN_TOOL);
    expect(err.message).toBe(
      'Unknown tool "util/ecko": not a built-in tool, and no space holds it. Did you mean "util/echo"?',
    );
    expect(err.hint).toBe('Built-in tools: util/echo, util/sleep.');
  });

  it('notAnItemKind and noSuchSpace name what was given and what is allowed', () => {
    const kind = notAnItemKind('tol', ['directive', 'tool', 'knowledge']);
    expectActionable(kind, ErrorCode.INVALID_REQUEST);
    expect(kind.message).toBe('"tol" is not an item type. Did you mean "tool"?');
    const space = noSuchSpace('user', 'Copy into "project".');
    expectActionable(space, ErrorCode.INVALID_REQUEST);
    expect(space.message).toBe('There is no user space here.');
  });

  it('systemSpaceReadOnly says what would have changed the system space', () => {
    const err = systemSpaceReadOnly('Cannot sign tool "a/b" in place', 'Load it into the project.');
    expectActionable(err, ErrorCode.SPACE_READ_ONLY);
    expect(err.message).toBe('Cannot sign tool "a/b" in place: the system space is read-only.');
  });

  it('tool file errors name the file and locate the problem', () => {
    const at = { file: 't.py', line: 2, column: 13 };
    const parse = toolDoesNotParse('Python', 't.py', 'invalid syntax', at);
    expectActionable(parse, ErrorCode.INVALID_TOOL);
    expect(parse.message).toBe('Python tool t.py does not parse: invalid syntax.');
    expect(parse.location).toEqual(at);
    const missing = toolMissingFields(
      'Python',
      't.py',
      [
        { name: 'parameters', shown: 'parameters' },
        { name: 'execute', shown: 'async def execute(params)' },
      ],
      'A tool file defines them.',
    );
    expectActionable(missing, ErrorCode.INVALID_TOOL);
    expect(missing.message).toBe(
      'Python tool t.py is missing parameters and async def execute(params).',
    );
    expect(missing.details).toEqual({ missing: ['parameters', 'execute'] });
    const yaml = toolYamlInvalid('t.yaml', 'bad indentation', at);
    expectActionable(yaml, ErrorCode.INVALID_TOOL);
    expect(yaml.message).toBe('t.yaml is not valid YAML: bad indentation');
  });
});

describe('file errors', () => {
  it('name the path as given, keep the resolved one in details, and say how to fix it', () => {
    const missing = fileNotFound('File "a.txt"', { path: '/p/a.txt', hint: 'Set path to a file.' });
    expectActionable(missing, ErrorCode.FILE_NOT_FOUND);
    expect(missing.message).toBe('File "a.txt" does not exist.');
    expect(missing.details).toEqual({ path: '/p/a.txt' });
    expect(fileNotFound('"src"', { why: 'it is a link to nothing' }).message).toBe(
      '"src" does not exist (it is a link to nothing).',
    );
    expect(notAFile('src', { hint: 'Set path to a file.' })).toMatchObject({
      code: ErrorCode.IS_A_DIRECTORY,
      message: '"src" is a folder, not a file.',
    });
    expect(notAFolder('a.txt', { hint: 'Set path to a folder.' })).toMatchObject({
      code: ErrorCode.NOT_A_DIRECTORY,
      message: '"a.txt" is a file, not a folder.',
    });
    expect(
      binaryFile('a.bin', 'edits change text', { hint: 'Set path to a text file.' }),
    ).toMatchObject({
      code: ErrorCode.BINARY_FILE,
      message: '"a.bin" is a binary file (it holds NUL bytes); edits change text.',
    });
    const large = fileTooLarge('big.txt', 20, 10, 'an edit', { hint: 'Edit a smaller file.' });
    expectActionable(large, ErrorCode.FILE_TOO_LARGE);
    expect(large.message).toBe('"big.txt" has 20 bytes, more than an edit takes (10).');
    expect(large.details).toEqual({ size: 20, limit: 10 });
  });

  it('cannotRead names the file and says why it could not be read', () => {
    const cause = new Error('EACCES: permission denied');
    const err = cannotRead('/p/d.md', cause, { what: 'directive file', hint: 'Make it readable.' });
    expectActionable(err, ErrorCode.FILE_NOT_FOUND);
    expect(err.message).toBe('Cannot read directive file /p/d.md: EACCES: permission denied');
    expect(err.cause).toBe(cause);
  });
});

describe('signing errors', () => {
  it('name the key file, or the PEM a program passed, with the fix that fits', () => {
    const unreadable = keyNotReadable({ file: '/k/private_key.pem' }, new Error('bad'));
    expectActionable(unreadable, ErrorCode.BAD_SIGNATURE);
    expect(unreadable.message).toBe('/k/private_key.pem holds no readable key.');
    expect(unreadable.hint).toContain('dirigent keys init --force');
    expect(keyNotReadable({ pem: 'public' }, new Error('bad')).hint).toContain(
      'generateSigningKey',
    );
    expect(keyNotEd25519({ file: '/k/k.pem' }, 'rsa').message).toBe(
      '/k/k.pem holds a key of type rsa, not Ed25519.',
    );
    expect(keyNotEd25519({ pem: 'private' }, undefined).message).toBe(
      'The private key PEM holds a key of unknown type, not Ed25519.',
    );
    const pair = keysNotAPair({ pem: 'private' }, { pem: 'public' }, 'abcd');
    expectActionable(pair, ErrorCode.BAD_SIGNATURE);
    expect(pair.message).toBe(
      'The private key PEM and the public key PEM (abcd) are not one key pair.',
    );
  });
});

describe('runtime errors', () => {
  it('say which program or host failed, and how', () => {
    const none = programNotFound(
      'Python interpreter',
      'Python tools',
      ['python3 (ENOENT)'],
      'Install python3.',
    );
    expectActionable(none, ErrorCode.RUNTIME_UNAVAILABLE);
    expect(none.message).toBe('No Python interpreter found for Python tools.');
    expect(none.hint).toBe('Tried python3 (ENOENT). Install python3.');
    const start = cannotStart('deno tool a/b', 'spawn deno ENOENT');
    expectActionable(start, ErrorCode.RUNTIME_UNAVAILABLE);
    expect(start.message).toBe('Could not start deno tool a/b: spawn deno ENOENT');
    const crash = hostCrashed(
      'The Deno process of deno tool a/b',
      'exited with code 3',
      'oops',
      {},
    );
    expectActionable(crash, ErrorCode.HOST_CRASHED, true);
    expect(crash.message).toBe(
      'The Deno process of deno tool a/b exited with code 3 during the call; stderr ends:\noops',
    );
  });

  it('say which params, secrets or request could not be used', () => {
    const params = paramsNotJson('python tool a/b', new TypeError('cyclic structure'));
    expectActionable(params, ErrorCode.INVALID_PARAMS);
    expect(params.message).toContain('not JSON-serialisable: cyclic structure');
    const secrets = missingSecrets('Tool "a/b"', ['A', 'B'], '/home/u/secrets.env');
    expectActionable(secrets, ErrorCode.MISSING_SECRET);
    expect(secrets.message).toBe(
      'Tool "a/b" needs the secrets A, B, which are set neither in the environment nor in /home/u/secrets.env.',
    );
    expect(missingSecrets('deno tool a/b', ['A']).message).toBe(
      'deno tool a/b needs the secret A, which is not set.',
    );
    const request = requestFailed('http tool a/b: GET https://x/y', 'ECONNREFUSED');
    expectActionable(request, ErrorCode.HTTP_FAILED, true);
    expect(request.message).toBe('http tool a/b: GET https://x/y failed: ECONNREFUSED.');
  });
});

describe('request and directive errors', () => {
  it('name the option, route or token problem', () => {
    const option = badOptionValue('--metrics-port', 'a port number from 1 to 65535', '0');
    expect(option).toMatchObject({
      code: ErrorCode.INVALID_REQUEST,
      message: '--metrics-port takes a port number from 1 to 65535 (got 0).',
    });
    expectActionable(
      noRoute('GET /v2/x', 'GET /openapi.json lists the routes.'),
      ErrorCode.NOT_FOUND,
    );
    expect(noRoute('GET /v2/x', 'h').message).toBe('No route GET /v2/x.');
    expectActionable(unauthorized(false), ErrorCode.UNAUTHORIZED);
    expect(unauthorized(true).message).toBe('The bearer token is not one this server accepts.');
  });

  it('xmlTooDeep locates the nesting and says how to flatten it', () => {
    const at = { file: 'd.md', line: 40, column: 3 };
    const err = xmlTooDeep('Elements are nested more than 64 levels deep here', at);
    expectActionable(err, ErrorCode.XML_TOO_DEEP);
    expect(err.message).toBe('Elements are nested more than 64 levels deep here.');
    expect(err.location).toEqual(at);
  });
});

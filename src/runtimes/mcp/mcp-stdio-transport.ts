/**
 * MCP's stdio transport, as the SDK's `StdioClientTransport` speaks it (one JSON-RPC message per
 * line on the server's stdin and stdout), with the server in a process group of its own that the
 * group reaper guards: a stdio server and whatever it starts (the `node` an `npx` launcher runs, a
 * call's subprocess) die with the worker that started them, and `close` stops the whole group.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { endGroup, guardGroup } from '../group-reaper.js';
import { killGroup } from '../process-group.js';

/** The server to start. */
export interface McpStdioServer {
  command: string;
  args: readonly string[];
  /** Added to the few variables every server gets (`HOME`, `PATH`, `USER`, …). */
  env: Record<string, string>;
  cwd: string;
}

/** How long a server gets to exit after its stdin closes, before its group is killed. */
const EXIT_GRACE_MS = 2000;

/** A stdio MCP server as a transport of the SDK's `Client`. */
export class McpStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /** The server's standard error, readable from before it starts. */
  readonly stderr = new PassThrough();
  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();

  constructor(private readonly server: McpStdioServer) {}

  start(): Promise<void> {
    if (this.child !== undefined) throw new Error('McpStdioTransport already started');
    return new Promise((resolve, reject) => {
      const child = spawn(this.server.command, [...this.server.args], {
        cwd: this.server.cwd,
        env: { ...getDefaultEnvironment(), ...this.server.env },
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      this.child = child;
      const pid = child.pid;
      if (pid !== undefined) guardGroup(pid);
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => resolve());
      // Whatever the server started goes with it.
      child.on('exit', () => pid !== undefined && endGroup(pid));
      child.on('close', () => {
        this.child = undefined;
        this.onclose?.();
      });
      child.stdin!.on('error', (error) => this.onerror?.(error));
      child.stdout!.on('error', (error) => this.onerror?.(error));
      child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
      child.stderr!.pipe(this.stderr);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (stdin == null) return Promise.reject(new Error('Not connected'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Closes the server's stdin, and kills its group if it has not exited a moment later. */
  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.buffer.clear();
    if (child === undefined) return;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.stdin?.end();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, EXIT_GRACE_MS)));
    await Promise.race([closed, late]);
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined)
      await killGroup(child.pid);
  }

  /** Hands on every whole line the server wrote; a line that is not a message is an error. */
  private read(chunk: Buffer): void {
    try {
      this.buffer.append(chunk);
    } catch (error) {
      // More than the buffer holds without a line break: the server does not speak MCP.
      this.onerror?.(error as Error);
      void this.close().catch(() => {
        /* The transport is dropped either way; onerror above told the client why. */
      });
      return;
    }
    for (;;) {
      try {
        const message = this.buffer.readMessage();
        if (message === null) return;
        this.onmessage?.(message);
      } catch (error) {
        this.onerror?.(error as Error);
      }
    }
  }
}

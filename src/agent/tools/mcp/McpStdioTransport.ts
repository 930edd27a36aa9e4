import { spawn, type ChildProcess } from 'node:child_process';

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

import { endGroup, liveGroupsAtExit, signalGroup } from '../../../sandbox/process/signalGroup.js';

/** how much of a server's stderr is kept, for the messages that say why it failed */
export const MCP_STDERR_TAIL_BYTES = 8 * 1024;
/** how long a server has to exit after SIGTERM before its group gets SIGKILL */
export const MCP_KILL_GRACE_MS = 2_000;

/** .what = how a stdio server process ended: its exit code or the signal that killed it */
export interface McpServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * .what = an MCP client transport over a child's stdin/stdout, the child leading its own process group
 * .why = the SDK's StdioClientTransport neither starts a group nor kills one: a server's own children (npx → node,
 *        uvx → python) would outlive the run. This one kills the whole group on close (SIGTERM, SIGKILL after 2 s)
 *        and keeps a stderr tail so a failure can say why
 */
export class McpStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | null = null;
  private stderrTail = Buffer.alloc(0);
  private stderrCut = false;
  private exited: McpServerExit | null = null;
  private exitedPromise: Promise<void> | null = null;
  private closed = false;
  private closedPromise: Promise<void> | null = null;
  private readBuffer: { append: (chunk: Buffer) => void; readMessage: () => JSONRPCMessage | null; clear: () => void };

  constructor(
    private readonly params: { command: string; args: string[]; env: Record<string, string>; cwd: string },
    private readonly stdio: {
      ReadBuffer: new () => McpStdioTransport['readBuffer'];
      serializeMessage: (message: JSONRPCMessage) => string;
    },
  ) {
    this.readBuffer = new stdio.ReadBuffer();
  }

  /** the leader's pid (the group's id), null before spawn or when the spawn failed */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** how the server ended, null while it runs */
  get exit(): McpServerExit | null {
    return this.exited;
  }

  /** the last 8 KB the server wrote to stderr, as text */
  get stderr(): string {
    const text = this.stderrTail.toString('utf8');
    // a cut tail may start inside a character or a line: start at the next whole line
    return (this.stderrCut ? text.slice(text.indexOf('\n') + 1) : text).trim();
  }

  start = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (this.child) return reject(new Error('the MCP stdio transport was already started'));
      // argv, never a shell string; stderr piped so we can report it, not inherited into bhrain's own stderr
      const child = spawn(this.params.command, this.params.args, {
        cwd: this.params.cwd,
        env: this.params.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      this.child = child;
      const pid = child.pid;
      if (pid !== undefined) {
        liveGroupsAtExit.add(pid);
      }
      this.exitedPromise = new Promise<void>((resolveExit) => {
        child.once('exit', (code, signal) => {
          this.exited = { code, signal };
          // the leader is gone: whatever it left in its group must not outlive it
          if (pid !== undefined) {
            signalGroup(pid, 'SIGKILL');
            liveGroupsAtExit.delete(pid);
          }
          resolveExit();
        });
        child.once('error', () => {
          // a failed spawn never exits: nothing to wait for
          if (pid === undefined) resolveExit();
        });
      });
      child.on('error', (error) => {
        if (pid === undefined) return reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => resolve());
      this.closedPromise = new Promise<void>((resolveClosed) =>
        child.once('close', () => {
          this.closed = true;
          resolveClosed();
          this.onclose?.();
        }),
      );
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => {
        try {
          this.readBuffer.append(chunk);
          for (let message = this.readBuffer.readMessage(); message; message = this.readBuffer.readMessage()) this.onmessage?.(message);
        } catch (error) {
          // a line that is not JSON-RPC is the server's fault, not a reason to drop the connection
          this.onerror?.(error as Error);
        }
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        const joined = Buffer.concat([this.stderrTail, chunk]);
        this.stderrCut ||= joined.length > MCP_STDERR_TAIL_BYTES;
        this.stderrTail = joined.length > MCP_STDERR_TAIL_BYTES ? joined.subarray(joined.length - MCP_STDERR_TAIL_BYTES) : joined;
      });
    });

  send = (message: JSONRPCMessage): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || this.exited || this.closed) return reject(new Error('the MCP server is not running'));
      if (stdin.write(this.stdio.serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });

  /** kills the whole group: SIGTERM, then SIGKILL after the grace period; resolves once the leader has exited */
  close = async (): Promise<void> => {
    const child = this.child;
    const pid = child?.pid;
    if (!child || pid === undefined) return;
    if (!this.exited) child.stdin?.end();
    await endGroup({ pid, exited: this.exitedPromise ?? Promise.resolve(), running: !this.exited, graceMs: MCP_KILL_GRACE_MS });
    liveGroupsAtExit.delete(pid);
    // the rest of stderr is what says why it failed: read it all, unless a process that left the group holds the pipes
    let drainTimer: NodeJS.Timeout | undefined;
    await Promise.race([this.closedPromise, new Promise<void>((resolve) => (drainTimer = setTimeout(resolve, MCP_KILL_GRACE_MS)))]);
    clearTimeout(drainTimer);
    this.readBuffer.clear();
    for (const stream of child.stdio) stream?.destroy();
  };
}

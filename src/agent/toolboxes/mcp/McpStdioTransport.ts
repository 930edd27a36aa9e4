import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

import { spawnGroup, type ChildGroup } from '../../../process/spawnGroup.js';

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
 * .what = an MCP client transport over a child's stdin/stdout, the child leading its own process group (spawnGroup)
 * .why = the SDK's StdioClientTransport neither starts a group nor kills one: a server's own children (npx → node,
 *        uvx → python) would outlive the run. This one kills the whole group on close (SIGTERM, SIGKILL after 2 s)
 *        and keeps a stderr tail so a failure can say why
 */
export class McpStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private group: ChildGroup | null = null;
  private closed = false;
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
    return this.group?.pid ?? null;
  }

  /** how the server ended, null while it runs */
  get exit(): McpServerExit | null {
    return this.group?.exit ?? null;
  }

  /** the last 8 KB the server wrote to stderr, as text */
  get stderr(): string {
    const kept = this.group?.captured().stderr;
    if (!kept) return '';
    const text = `${kept.head}${kept.tail}`;
    // a cut tail may start inside a line: start at the next whole line
    return (kept.droppedBytes > 0 ? text.slice(text.indexOf('\n') + 1) : text).trim();
  }

  start = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (this.group) return reject(new Error('the MCP stdio transport was already started'));
      // stderr captured so we can report it, not inherited into bhrain's own stderr; no deadline: the server lives
      // until close, whose stop is SIGTERM, then SIGKILL after the grace
      const group = spawnGroup({
        command: this.params.command,
        args: this.params.args,
        cwd: this.params.cwd,
        env: this.params.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        capture: { stderr: { maxBytes: MCP_STDERR_TAIL_BYTES, keep: 'tail' } },
        killGraceMs: MCP_KILL_GRACE_MS,
        // the rest of stderr is what says why it failed: read it all, unless a process that left the group holds the pipes
        closeGraceMs: MCP_KILL_GRACE_MS,
      });
      this.group = group;
      const { child } = group;
      child.on('error', (error) => {
        if (group.pid === null) return reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => resolve());
      void group.ended.then(() => {
        this.closed = true;
        this.onclose?.();
      });
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
    });

  send = (message: JSONRPCMessage): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const stdin = this.group?.child.stdin;
      if (!stdin || this.exit || this.closed) return reject(new Error('the MCP server is not running'));
      if (stdin.write(this.stdio.serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });

  /** kills the whole group: SIGTERM, then SIGKILL after the grace period; resolves once it has ended */
  close = async (): Promise<void> => {
    const group = this.group;
    if (!group || group.pid === null) return;
    // EOF first: a server that reads it may exit on its own before the SIGTERM lands
    if (!group.exit) group.child.stdin?.end();
    await group.stop();
    this.readBuffer.clear();
  };
}

import type { Bhrain } from '../../agent/genBhrain.js';
import type { McpToolBox } from '../../agent/toolboxes/mcp/genMcpToolBox.js';
import type { BrainLog } from '../../core/contract/BrainContext.js';
import { AbortedError, BadRequestError } from '../../core/contract/errors.js';
import type { McpServerToStart } from './resolveMcpServers.js';

/** .what = the env var that gives the MCP servers' start timeout in milliseconds (Claude Code's name) */
export const MCP_TIMEOUT_ENV_VAR = 'MCP_TIMEOUT';
/** .what = how long each server has to start and answer tools/list, when MCP_TIMEOUT is not set */
export const DEFAULT_MCP_TIMEOUT_MS = 30_000;

/** .what = MCP_TIMEOUT read: a whole number of milliseconds of at least 1, else the default; a bad value names the variable */
export const readMcpTimeoutMs = (env: Record<string, string | undefined>): number => {
  const value = env[MCP_TIMEOUT_ENV_VAR];
  if (value === undefined || value.trim() === '') return DEFAULT_MCP_TIMEOUT_MS;
  const ms = Number(value.trim());
  if (!Number.isInteger(ms) || ms < 1)
    throw new BadRequestError(
      `${MCP_TIMEOUT_ENV_VAR} must be a whole number of milliseconds of at least 1 (the MCP servers' start timeout), got '${value}'`,
    );
  return ms;
};

/** .what = the MCP servers of one run, started and offered to a brain; close() ends them all */
export interface McpServersRunning {
  boxes: readonly McpToolBox[];
  /** stops following tool-list changes and closes every server (a stdio server with its whole process group) */
  close: () => Promise<void>;
}

/**
 * .what = starts the run's MCP servers concurrently, each with the start timeout, and offers the tools of those that
 *         started to the brain (following their tool-list changes)
 * .why = a failed server is an error line naming it with its stderr tail, and the run goes on without it; with
 *        required it stops the run (BadRequestError, exit 2) before any model request. Whatever happens here, no
 *        server that did start is left running: a failure or an abort closes them before throwing
 */
export const startMcpServers = async (
  input: {
    servers: readonly McpServerToStart[];
    timeoutMs: number;
    required: boolean;
    brain: Pick<Bhrain, 'toolBoxes'>;
    /** offer only the tools each server marks read-only (readOnlyHint), for a read-only run */
    readOnly?: boolean;
  },
  context: { cwd: string; env: Record<string, string | undefined>; log: BrainLog; signal?: AbortSignal },
): Promise<McpServersRunning> => {
  if (!input.servers.length) return { boxes: [], close: async () => {} };
  // loaded only now: a run without MCP servers never pays for the SDK
  const [{ genMcpToolBox }, { attachMcpToolBox }] = await Promise.all([
    import('../../agent/toolboxes/mcp/genMcpToolBox.js'),
    import('../../agent/toolboxes/mcp/attachMcpToolBox.js'),
  ]);
  const settled = await Promise.allSettled(
    input.servers.map((server) =>
      genMcpToolBox(
        { name: server.name, transport: server.transport, startTimeoutMs: input.timeoutMs },
        { cwd: context.cwd, env: context.env, log: context.log, signal: context.signal },
      ),
    ),
  );
  const boxes = settled.flatMap((each) => (each.status === 'fulfilled' ? [each.value] : []));
  const detaches: Array<() => void> = [];
  const close = async () => {
    for (const detach of detaches.splice(0)) detach();
    await Promise.allSettled(boxes.map((box) => box.close()));
  };
  const failed = settled.flatMap((each, index) =>
    each.status === 'rejected' ? [{ name: input.servers[index].name, error: each.reason as Error }] : [],
  );
  if (context.signal?.aborted) {
    await close();
    throw new AbortedError('the run was interrupted while its MCP servers were starting');
  }
  for (const { name, error } of failed) {
    const message = error?.message ?? String(error);
    // the library's error already names the server; anything else gets its name here
    context.log.error(message.includes(`'${name}'`) ? message : `MCP server '${name}' did not start: ${message}`);
  }
  if (failed.length && input.required) {
    await close();
    throw new BadRequestError(
      `--mcp-required: MCP server${failed.length > 1 ? 's' : ''} ${failed.map(({ name }) => `'${name}'`).join(', ')} did not start (see above); fix the config, or run without --mcp-required to go on without ${failed.length > 1 ? 'them' : 'it'}`,
    );
  }
  try {
    for (const box of boxes) detaches.push(attachMcpToolBox(input.brain, box, { log: context.log, readOnly: input.readOnly }));
  } catch (error) {
    // a tool name that clashes with another toolbox's is the config's mistake: nothing is left running
    await close();
    throw error;
  }
  return { boxes, close };
};

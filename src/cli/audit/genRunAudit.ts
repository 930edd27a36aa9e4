import type { BhrainSubagent } from '../../agent/BhrainSession.js';
import type { BhrainEvent } from '../../agent/events.js';
import type { BhrainHook, BhrainHooks } from '../../agent/hooks/BhrainHook.js';
import type { BhrainPermissionGuard } from '../../agent/permission/BhrainPermissionGuard.js';
import type { BrainTokens } from '../../core/contract/BrainOutput.js';
import type { ProtectedChange } from '../../sandbox/genProtectedTree.js';
import type { NetworkAudit } from '../../sandbox/network/startDomainProxy.js';
import {
  AUDIT_SKIPPED_DIRS,
  DEFAULT_SNAPSHOT_BUDGET,
  diffSnapshots,
  snapshotTree,
  type SnapshotBudget,
  type SnapshotCut,
  type TreeSnapshot,
} from './snapshotTree.js';
import {
  diffHiddenFromReview,
  snapshotHiddenFromReview,
  type AuditHiddenEntry,
  type AuditHiddenFile,
  type HiddenFromReviewSnapshot,
} from './snapshotHiddenFromReview.js';

/**
 * .what = the version of the audit's shape, inside the output schema's (schemas/output.schema.json `audit.version`)
 *
 * .changelog
 *   1 = { version, files, commands, tools, subagents, hooks, network, denied, tokens, costUsd, wallTimeMs }
 *   2 = adds `hidden`: what the run hid from `git status` and `git diff` (index bits, info/exclude, info/attributes,
 *       core.excludesFile, core.attributesFile); and `protected`: the protected entries bash made or changed, put right,
 *       and the repositories it made; every field of version 1 is unchanged
 */
export const AUDIT_VERSION = 2;

/** .what = how many entries each list of the audit keeps; past it, the rest are counted in `omitted` */
export const AUDIT_MAX_LISTED = 1_000;

/** .what = a list of the audit, bounded: its first AUDIT_MAX_LISTED items and how many were left out */
export interface AuditList<T> {
  items: T[];
  omitted: number;
}

/**
 * .what = a command bash ran: its exit code (null: killed) and how long it took; a subagent's names the subagent (its
 *         uuid, as in `subagents`) and has no duration (its events stay in its session; its transcript has the result).
 *         A denied one never ran (see denials)
 */
export interface AuditCommand {
  command: string;
  exitCode: number | null;
  durationMs: number | null;
  subagent: string | null;
}

/** .what = one tool the run called that is not built in (an MCP server's `mcp__server__tool`): its calls */
export interface AuditTool {
  tool: string;
  calls: number;
  failed: number;
  denied: number;
}

/** .what = one subagent the task tool started, and how it ended (null: it had not ended) */
export interface AuditSubagent {
  uuid: string;
  type: string;
  description: string;
  status: 'COMPLETED' | 'FAILED' | null;
}

/** .what = one hook run: its event, its command, its exit code and decision, how long it took */
export interface AuditHook {
  event: string;
  hook: string;
  exitCode: number | null;
  decision: string | null;
  durationMs: number;
}

/** .what = what hides a change from review that the run set or changed: index bits, and the files that hide paths or diffs */
export interface AuditHidden {
  index: AuditList<AuditHiddenEntry>;
  files: AuditList<AuditHiddenFile>;
  /** why the index could not be compared (git failed, or was not run); null when it was, or there is no repository */
  unread: string | null;
}

/**
 * .what = the end-of-run audit: what changed in the working directory, what ran, where bash went, what it spent
 * .why = a CI job (and its reviewer) sees everything the agent did from one place: the JSON's `audit`, the run record's
 *        audit.json, and the job summary
 */
export interface RunAudit {
  version: typeof AUDIT_VERSION;
  files: {
    created: AuditList<string>;
    changed: AuditList<string>;
    deleted: AuditList<string>;
    /** false when no tool and no hook ran: nothing could change, so the working directory was not walked again */
    walked: boolean;
    /** whether both walks were complete: false when a budget cut one (then `cut` says which) */
    complete: boolean;
    /** the limits that cut a walk: files (maxFiles), bytes (a file over the hash budget, compared by its stat), time */
    cut: SnapshotCut[];
    budget: SnapshotBudget;
    /** the directory names never walked */
    skipped: string[];
  };
  /** what hides a change from `git status` and `git diff` that the run set or changed (hidden from review) */
  hidden: AuditHidden;
  commands: AuditList<AuditCommand>;
  tools: AuditTool[];
  subagents: AuditList<AuditSubagent>;
  hooks: AuditList<AuditHook>;
  /** hosts bash reached and was refused through the domain proxy; null when the network was not opened by domain */
  network: NetworkAudit | null;
  /** what bash made or changed among the protected entries (removed or put back when its command ended), and the git
   *  repositories it made, with what in them runs code; the run's and its subagents' */
  protected: AuditList<ProtectedChange>;
  denied: number;
  tokens: BrainTokens | null;
  costUsd: number | null;
  wallTimeMs: number;
}

/** .what = a list that keeps its first AUDIT_MAX_LISTED items and counts the rest */
const genBoundedList = <T>() => {
  const list: AuditList<T> = { items: [], omitted: 0 };
  const push = (item: T) => (list.items.length < AUDIT_MAX_LISTED ? list.items.push(item) : list.omitted++);
  return { list, push };
};

const bounded = <T>(items: T[]): AuditList<T> => ({
  items: items.slice(0, AUDIT_MAX_LISTED),
  omitted: Math.max(0, items.length - AUDIT_MAX_LISTED),
});

/** .what = what the run's events say it ran: commands, MCP tools, subagents, hooks, denials */
const genEventAudit = (redact: (text: string) => string) => {
  const started = new Map<string, { tool: string; input: Record<string, unknown> }>();
  const commands = genBoundedList<AuditCommand>();
  const subagents = genBoundedList<AuditSubagent>();
  const hooks = genBoundedList<AuditHook>();
  const subagentsByCall = new Map<string, AuditSubagent>();
  const tools = new Map<string, AuditTool>();
  const protectedChanges = genBoundedList<ProtectedChange>();
  let denied = 0;
  /** .what = a subagent's event: only what its bash put right counts here (its commands are read from its transcript) */
  const onSubagentEvent = (event: BhrainEvent): void => {
    if (event.type === 'ToolExecutionCompleted') for (const change of event.protectedChanges ?? []) protectedChanges.push(change);
  };
  const onEvent = (event: BhrainEvent): void => {
    onSubagentEvent(event);
    if (event.type === 'ToolCallStarted')
      started.set(event.callId, { tool: event.toolName, input: (event.input ?? {}) as Record<string, unknown> });
    if (event.type === 'ToolExecutionCompleted') {
      const call = started.get(event.callId);
      started.delete(event.callId);
      if (event.denied) denied++;
      if (event.toolName === 'bash' && !event.denied && typeof call?.input.command === 'string')
        commands.push({
          command: redact(call.input.command),
          exitCode: event.exitCode ?? null,
          durationMs: Math.round(event.durationMs),
          subagent: null,
        });
      if (event.toolName.startsWith('mcp__')) {
        const tool = tools.get(event.toolName) ?? { tool: event.toolName, calls: 0, failed: 0, denied: 0 };
        tools.set(event.toolName, tool);
        tool.calls++;
        if (event.denied) tool.denied++;
        else if (!event.success) tool.failed++;
      }
    }
    if (event.type === 'SubagentStarted') {
      const subagent: AuditSubagent = {
        uuid: event.sessionUuid,
        type: event.subagentType,
        description: redact(event.description),
        status: null,
      };
      subagentsByCall.set(`${event.sessionUuid}`, subagent);
      subagents.push(subagent);
    }
    if (event.type === 'SubagentCompleted') {
      const subagent = subagentsByCall.get(event.sessionUuid);
      if (subagent) subagent.status = event.status;
    }
    if (event.type === 'HookCompleted')
      hooks.push({
        event: event.hookEventName,
        hook: redact(event.hookName),
        exitCode: event.exitCode,
        decision: event.decision,
        durationMs: Math.round(event.durationMs),
      });
  };
  return {
    onEvent,
    onSubagentEvent,
    /** .what = the counts, with the commands of every subagent's transcript after the run's own */
    read: (children: readonly BhrainSubagent[]) => {
      for (const child of children)
        for (const command of readSubagentCommands(child)) commands.push({ ...command, command: redact(command.command) });
      return {
        commands: commands.list,
        tools: [...tools.values()],
        subagents: subagents.list,
        hooks: hooks.list,
        protected: protectedChanges.list,
        denied,
      };
    },
  };
};

/** .what = the bash commands a subagent ran, from its transcript: a call whose result has an exit code ran (a denied one has none) */
const readSubagentCommands = (child: BhrainSubagent): AuditCommand[] => {
  const exitCodes = new Map<string, number | null>();
  for (const message of child.transcript)
    if (message.role === 'tool' && message.toolName === 'bash' && message.exitCode !== undefined)
      exitCodes.set(message.toolCallId, message.exitCode);
  return child.transcript.flatMap((message) =>
    message.role !== 'assistant'
      ? []
      : message.toolCalls
          .filter((call) => call.name === 'bash' && typeof call.input.command === 'string' && exitCodes.has(call.id))
          .map((call) => ({
            command: call.input.command as string,
            exitCode: exitCodes.get(call.id)!,
            durationMs: null,
            subagent: child.uuid,
          })),
  );
};

/**
 * .what = a run's audit: its events counted from now; the working directory's walk begun by `begin`, just before the
 *         run's first request
 * .why = the start walk runs while the first request is answered, never delaying it nor the run's set-up; `guard` and
 *        `hooks` hold each tool call and hook run until the walk is done, so the start state is the state before any tool ran. A run in which no
 *        tool and no hook ran changed nothing: its walk is stopped and never repeated at the end (`walked: false`)
 */
export const startRunAudit = (
  input: { cwd: string; redact: (text: string) => string; budget?: SnapshotBudget },
  context: { env: Record<string, string | undefined> } = { env: process.env },
) => {
  const budget = input.budget ?? DEFAULT_SNAPSHOT_BUDGET;
  const startedAt = Date.now();
  const stopped = new AbortController();
  // an unreadable directory is skipped by the walk (not listed): a walk never fails the run
  let start: Promise<TreeSnapshot> | null = null;
  // what hides a change from review, read beside the walk: the index's bits, info/exclude and its kin
  let hiddenAtStart: Promise<HiddenFromReviewSnapshot> | null = null;
  const begin = () => {
    start ??= snapshotTree({ root: input.cwd, budget, signal: stopped.signal });
    hiddenAtStart ??= snapshotHiddenFromReview({ cwd: input.cwd }, context);
  };
  const events = genEventAudit(input.redact);
  let acted = false;
  const onEvent = (event: BhrainEvent) => {
    if (event.type === 'ToolCallStarted' || event.type === 'HookStarted') acted = true;
    events.onEvent(event);
  };
  /** .what = waits for the start walk (bounded by budget.maxMs), beginning it if the run has not yet */
  const ready = async () => {
    begin();
    await Promise.all([start, hiddenAtStart]);
  };
  /** .what = the run's guard, holding each call until the start walk is done */
  const guard = (inner: BhrainPermissionGuard): BhrainPermissionGuard => ({
    ...inner,
    check: async (call, context) => {
      await ready();
      return inner.check(call, context);
    },
  });
  /** .what = the run's hooks, each held until the start walk is done: a hook that writes (SessionStart, PreToolUse) writes after it */
  const hooks = (inner: BhrainHooks): BhrainHooks =>
    Object.fromEntries(
      Object.entries(inner).map(([event, list]) => [
        event,
        list.map((hook) => ({
          ...hook,
          run: async (...args: Parameters<BhrainHook['run']>) => {
            await ready();
            return hook.run(...args);
          },
        })),
      ]),
    );
  /** .what = the files created, changed and deleted since the start walk (none, unwalked, when nothing ran) */
  const auditFiles = async () => {
    if (!acted || !start || !hiddenAtStart) {
      stopped.abort();
      const hidden = { index: [], files: [], unread: null };
      return { diff: { created: [], changed: [], deleted: [] }, cut: [] as SnapshotCut[], walked: false, hidden };
    }
    const before = await start;
    const [after, hiddenAtEnd] = await Promise.all([
      snapshotTree({ root: input.cwd, budget, previous: before }),
      snapshotHiddenFromReview({ cwd: input.cwd }, context),
    ]);
    const cut = [...new Set([...before.cuts, ...after.cuts])].sort();
    const diff = diffSnapshots(before, after);
    // a bit set before the run hides what the run changed or deleted under it
    const hidden = diffHiddenFromReview(await hiddenAtStart, hiddenAtEnd, new Set([...diff.changed, ...diff.deleted]));
    return { diff, cut, walked: true, hidden };
  };
  /** .what = the audit, after the end walk: every path and command redacted */
  const finish = async (done: {
    network: NetworkAudit | null;
    tokens: BrainTokens | null;
    costUsd: number | null;
    subagents: readonly BhrainSubagent[];
  }): Promise<RunAudit> => {
    const { diff, cut, walked, hidden } = await auditFiles();
    const redactAll = (paths: string[]) => bounded(paths.map((path) => input.redact(path)));
    return {
      version: AUDIT_VERSION,
      files: {
        created: redactAll(diff.created),
        changed: redactAll(diff.changed),
        deleted: redactAll(diff.deleted),
        walked,
        complete: cut.length === 0,
        cut,
        budget,
        skipped: [...AUDIT_SKIPPED_DIRS],
      },
      hidden: {
        index: bounded(hidden.index.map((entry) => ({ ...entry, path: input.redact(entry.path) }))),
        files: bounded(hidden.files.map((file) => ({ ...file, path: input.redact(file.path) }))),
        unread: hidden.unread === null ? null : input.redact(hidden.unread),
      },
      ...events.read(done.subagents),
      network: done.network,
      tokens: done.tokens,
      costUsd: done.costUsd,
      wallTimeMs: Date.now() - startedAt,
    };
  };
  /** .what = stops the start walk: the run ended without an audit (it failed before it finished) */
  const stop = () => stopped.abort();
  return { onEvent, onSubagentEvent: events.onSubagentEvent, guard, hooks, begin, finish, stop };
};

export type RunAuditing = ReturnType<typeof startRunAudit>;

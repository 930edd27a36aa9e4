import { relative } from 'node:path';

import type { BrainLog } from '../../core/contract/BrainContext.js';
import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import type { BhrainDenialSource } from '../BhrainSessionResult.js';
import type { BhrainPermissionDecision, BhrainPermissionGuard, BhrainPrompter } from '../permission/BhrainPermissionGuard.js';
import { consultGuard } from '../permission/BhrainPermission.js';
import type { BhrainSessionApprovals } from '../permission/genSessionApprovals.js';
import { findHardLinkedTarget, findOutsideWorkspace, findProtectedTarget, findWriteTarget } from '../permission/findOutsideWorkspace.js';
import type { BhrainToolEffect, BhrainToolPath } from '../tool/defineTool.js';
import type { WriteCheck } from '../toolboxes/files/openInsideWorkspace.js';

/**
 * .what = whether a call may run, and if not, the denial the model reads, who denied it and why; for a write or edit, the
 *         file judged, and whether the user approved it although it lands outside the workspace, in a protected path (git's
 *         hooks or config, a shell's start-up file, an editor's or an agent's settings: PROTECTED_PATHS), or in a
 *         hard-linked file
 */
export type PermissionVerdict =
  { allowed: true; writeCheck: WriteCheck | null } | { allowed: false; denial: string; by: BhrainDenialSource; reason: string };

/**
 * .what = consults the guard for one call, and the prompter when the guard asks for approval
 * .why = fail closed: a guard that throws, hangs or answers nonsense denies; a prompt with no way to ask denies, saying so;
 *        a prompt the session's remembered approvals cover is allowed without asking (only the guard's prompt, see below);
 *        a file change (any path the call's tool declares with access write: write, edit, a custom tool) outside the
 *        workspace (../, absolute, a symlink pointing out), into a protected path (unless a rule names that path exactly),
 *        or into a file with other hard links is always a prompt at least; it runs right before the call, after any bash
 *        call of the turn that could have made a link (runToolCalls). The guard is told the call's effect and paths
 */
export const checkPermission = async (input: {
  call: BrainToolCall;
  /** what the call's tool does; null = unknown */
  effect: BhrainToolEffect | null;
  /** the files the call touches, from its tool's paths() */
  paths: readonly BhrainToolPath[];
  guard: BhrainPermissionGuard;
  prompter: BhrainPrompter | null;
  cwd: string;
  /** the directories the session may change besides cwd (real paths, resolveAddDirs) */
  addDirs?: readonly string[];
  guardTimeoutMs: number;
  log: BrainLog;
  /** what the user approved for the rest of this session; absent = nothing is remembered, and 'always' is not offered */
  approvals?: BhrainSessionApprovals | null;
  /** the guard's answer for this very call, when a PreToolUse gate already asked it */
  consulted?: Awaited<ReturnType<typeof consultGuard>>;
  /** a PreToolUse hook's allow or ask: after the guard, never over a deny or the notes below */
  hook?: { decision: 'allow' | 'ask'; reason: string } | null;
}): Promise<PermissionVerdict> => {
  const { call, guard } = input;
  const consulted =
    input.consulted ??
    (await consultGuard({
      call,
      guard,
      effect: input.effect,
      paths: input.paths,
      cwd: input.cwd,
      timeoutMs: input.guardTimeoutMs,
    }));
  if ('failed' in consulted) {
    const { message } = consulted.failed;
    input.log.error(`permission guard '${guard.name}' failed on ${call.name}; the call is denied`, { error: message, callId: call.id });
    return {
      allowed: false,
      denial: `permission denied: the permission guard failed (${message}), so ${call.name} was not run (guards fail closed). Try another approach, or ask the user.`,
      by: 'guard',
      reason: `the permission guard failed: ${message}`,
    };
  }
  let verdict: BhrainPermissionDecision = consulted.decision;
  // a hook's allow answers the guard's prompt (not its deny, nor namedExactly: a protected path is still asked about);
  // a hook's ask makes the guard's allow a prompt
  if (input.hook?.decision === 'allow' && verdict.decision === 'prompt') verdict = { decision: 'allow', reason: input.hook.reason };
  if (input.hook?.decision === 'ask' && verdict.decision === 'allow')
    verdict = { decision: 'prompt', reason: `a PreToolUse hook asks for approval${input.hook.reason ? `: ${input.hook.reason}` : ''}` };
  // whatever the guard says, a file change that lands outside the workspace, in what a later program trusts (unless the
  // user's rule names that very path), or in a file that also has a name elsewhere, is asked about, never silently
  // allowed, whichever tool makes it; write and edit then change only the file judged here
  const written = input.paths
    .filter((path) => path.access === 'write')
    .map(({ path }) => ({ path, cwd: input.cwd, addDirs: input.addDirs }));
  const judged = written.length ? findWriteTarget(written[0]) : null;
  const judging = verdict.decision !== 'deny';
  const checkProtected = judging && !(verdict.decision === 'allow' && verdict.namedExactly);
  const notes = written.flatMap((where) => {
    const outside = judging ? findOutsideWorkspace(where) : null;
    const protectedTarget = checkProtected ? findProtectedTarget(where) : null;
    const linked = judging ? findHardLinkedTarget(where) : null;
    return [
      ...(outside
        ? [`${call.name} would change ${outside}, outside the workspace ${[input.cwd, ...(input.addDirs ?? [])].join(', ')}`]
        : []),
      ...(protectedTarget
        ? [
            `${call.name} would change ${protectedTarget.realPath}, a protected path: ${protectedTarget.trustedBy}, outside any sandbox (a rule naming that exact path, e.g. \`write(${relative(input.cwd, protectedTarget.realPath)})\`, allows it)`,
          ]
        : []),
      ...(linked
        ? [
            `${call.name} would change ${linked.realPath}, which has ${linked.links} hard links (another name for it may lie outside the workspace)`,
          ]
        : []),
    ];
  });
  if (notes.length) {
    const note = notes.join('; ');
    verdict = { decision: 'prompt', reason: verdict.decision === 'prompt' && verdict.reason ? `${verdict.reason}; ${note}` : note };
  }
  // allowed with no note: only a rule naming the file exactly lets it through when it is protected, and then it is approved
  if (verdict.decision === 'allow')
    return { allowed: true, writeCheck: judged === null ? null : { realPath: judged, approved: !!verdict.namedExactly } };
  const reason = verdict.reason ?? `${call.name} needs approval`;
  if (verdict.decision === 'deny')
    return { allowed: false, denial: `permission denied: ${reason}. ${call.name} was not run; adjust your approach.`, by: 'guard', reason };
  if (!input.prompter)
    return {
      allowed: false,
      denial: `permission denied: ${reason}, and approval was needed but there is no way to ask the user (not an interactive terminal). ${call.name} was not run; proceed without it or explain what approval is needed.`,
      by: 'no-prompter',
      reason,
    };
  // a remembered approval answers only the guard's own question: never the outside, protected or hard-link notes, never a deny
  const approvals = notes.length ? null : (input.approvals ?? null);
  if (approvals && (await approvals.covers({ call, effect: input.effect, paths: input.paths, cwd: input.cwd }))) {
    input.log.info(`${call.name} allowed by an approval remembered this session`, { callId: call.id, reason });
    return { allowed: true, writeCheck: judged === null ? null : { realPath: judged, approved: false } };
  }
  try {
    const remember = approvals
      ? await approvals.offer({ call, effect: input.effect, paths: input.paths, decision: verdict, cwd: input.cwd })
      : [];
    const answer = await input.prompter({ call, reason, remember });
    if (answer === 'always' && remember.length) {
      approvals!.remember(remember);
      // the patterns are not logged: they quote the command, which may hold a secret the log would not redact
      input.log.info(`the user approved ${call.name} for the rest of this session (${remember.length} pattern(s))`, { callId: call.id });
    }
    // an approval covers the outside, protected and hard-link notes only when they were part of the question
    if (answer === true || answer === 'always')
      return { allowed: true, writeCheck: judged === null ? null : { realPath: judged, approved: notes.length > 0 } };
    return {
      allowed: false,
      denial: `permission denied: the user declined ${call.name} (${reason}). Do not retry it; take another approach.`,
      by: 'prompt',
      reason: `the user declined: ${reason}`,
    };
  } catch (error) {
    input.log.error(`prompting the user for ${call.name} failed; the call is denied`, { error: String(error) });
    return {
      allowed: false,
      denial: `permission denied: asking the user for approval failed (${(error as Error).message}). ${call.name} was not run.`,
      by: 'prompt',
      reason: `asking the user for approval failed: ${(error as Error).message}`,
    };
  }
};

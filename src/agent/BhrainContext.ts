import type { BrainContext } from '../core/contract/BrainContext.js';
import type { BhrainCheckpointer } from './checkpoint/BhrainCheckpointer.js';
import type { SecretRedactor } from '../core/secrets/genSecretRedactor.js';
import type { BhrainEventListener } from './events.js';
import type { BhrainPrompter } from './permission/BhrainPermissionGuard.js';

/**
 * .what = what the operator injects into a bhrain session, on top of the atom's context
 * .why = where to work, how to ask the user, where to stream text and events; all swappable in tests
 */
export interface BhrainContext extends BrainContext {
  /** the working directory for tools; process.cwd() when absent */
  cwd?: string;
  /**
   * more directories the tools may change besides cwd (as --add-dir), absolute: confined as cwd is (bash's sandbox
   * binds them writable, protected paths in them stay protected); one hidden, protected, or holding a directory of PATH
   * is a BadRequestError when the session opens (resolveAddDirs)
   */
  addDirs?: readonly string[];
  /** asks the user to approve a call the guard prompts for; absent = no way to ask, so such calls are denied */
  prompter?: BhrainPrompter;
  /** receives the model's text as it streams */
  onTextDelta?: (text: string) => void;
  /** the text streamed so far in this generation is void (a failed attempt that is retried): discard it */
  onTextReset?: () => void;
  /** receives the model's reasoning (thinking, reasoning_content, <think>) as it streams, apart from the answer's text */
  onReasoningDelta?: (text: string) => void;
  /** receives every domain event of the session */
  onEvent?: BhrainEventListener;
  /**
   * receives the events of the session's subagents, at any depth (their SessionStarted, model calls, tool calls, hooks,
   * SessionCompleted), which onEvent never gets; a SubagentStarted names the task call each child session belongs to
   */
  onSubagentEvent?: BhrainEventListener;
  /** where full outputs of truncated tool results are kept; a temp dir per session when absent */
  spillDir?: string;
  /**
   * replaces secrets in every tool result before the model reads it, and in the events and logs of its calls; absent =
   * the environment's secret values and the git credentials around cwd (readGitCredentials), read once at the session's
   * start; a subagent gets its parent's. The CLI gives its own, which also redacts the answer, the record and the refs
   */
  redact?: SecretRedactor;
  /**
   * records the files before the session's first turn that may change files and after each such turn that did, so they
   * can be restored (genGitCheckpointer; docs/continuation.md#rewind); absent = none. The session's own turns only: a
   * subagent's changes are in its parent's turn
   */
  checkpointer?: BhrainCheckpointer;
}

import type { BhrainHookEventName } from '../../agent/hooks/BhrainHook.js';

/** .what = one command hook, as Claude Code's settings write it: a bash command, and its timeout in seconds */
export interface CommandHookSetting {
  type: 'command';
  command: string;
  /** seconds (Claude Code's unit); default 60 */
  timeout?: number;
}

/** .what = a settings file's `hooks`, in Claude Code's shape: by event, groups of command hooks under a matcher */
export type HooksSettings = Partial<Record<BhrainHookEventName, Array<{ matcher?: string; hooks: CommandHookSetting[] }>>>;

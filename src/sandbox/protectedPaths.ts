import { join } from 'node:path';

import { isUnder } from './resolveHiddenPaths.js';

/**
 * .what = the paths inside a workspace that a later program trusts, reads and runs, each with who does; a trailing /
 *         marks a directory, protected with all it holds
 * .why = a model that plants one escapes its confinement through whoever trusts it next (the next bhrain run, the next CI
 *        step, git, a shell, an editor, another agent): they are read-only to every tool the model drives, whether they
 *        exist yet or not. write and edit ask first (a rule naming the exact path allows it); bash's sandbox binds them
 *        read-only (genBwrapArgs)
 */
export const PROTECTED_PATHS: ReadonlyArray<{ path: string; trustedBy: string }> = [
  { path: '.bhrain/', trustedBy: 'the next bhrain run reads as its settings and instructions' },
  { path: '.claude/', trustedBy: 'Claude Code reads as its settings, hooks, agents and commands' },
  { path: '.agents/', trustedBy: 'the next bhrain run (and other agents) reads as Agent Skills' },
  { path: '.mcp.json', trustedBy: 'bhrain and Claude Code start MCP servers from' },
  { path: '.gitmodules', trustedBy: 'git follows for submodules' },
  { path: '.gitconfig', trustedBy: 'git reads as configuration (hooks, fsmonitor, aliases run code)' },
  { path: '.git/hooks/', trustedBy: 'git runs as code' },
  { path: '.git/config', trustedBy: 'git reads as configuration (hooks, fsmonitor, aliases run code)' },
  { path: '.bashrc', trustedBy: 'bash runs at start' },
  { path: '.bash_profile', trustedBy: 'bash runs at login' },
  { path: '.zshrc', trustedBy: 'zsh runs at start' },
  { path: '.zprofile', trustedBy: 'zsh runs at login' },
  { path: '.profile', trustedBy: 'a login shell runs' },
  { path: '.ripgreprc', trustedBy: 'ripgrep reads as its options' },
  { path: '.vscode/', trustedBy: 'VS Code reads as settings and tasks it runs' },
  { path: '.idea/', trustedBy: 'JetBrains IDEs read as settings and run configurations' },
];

/** .what = the protected path a real path inside the workspace is, or lies in; null when it is none of them */
export const findProtected = (workspace: string, path: string): { path: string; trustedBy: string } | null =>
  PROTECTED_PATHS.find((each) => isUnder(join(workspace, each.path.replace(/\/$/, '')), path)) ?? null;

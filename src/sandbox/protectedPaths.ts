import { lstatSync } from 'node:fs';
import { join, relative } from 'node:path';

import { isUnder } from '../core/paths/isUnder.js';

/**
 * .what = what bhrain reads as a project's configuration, in each directory from the repository root down to the working
 *         directory: its settings (hooks and MCP servers among them), Agent Skills, agent files, and the repository
 *         root's `.mcp.json`; every reader takes its paths from here
 * .why = one definition serves what bhrain reads and what the sandbox protects: each path's first name is in
 *        PROTECTED_ANYWHERE, so whatever a run of a model could plant at any depth is never read by the next run
 */
export const PROJECT_CONFIG_PATHS = {
  settings: '.bhrain/settings.json',
  skills: ['.bhrain/skills', '.claude/skills', '.agents/skills'],
  agents: ['.bhrain/agents', '.claude/agents'],
  mcpServers: '.mcp.json',
} as const;

/** .what = a kind of entry a later program trusts: its name, and who trusts it (the model is told, the docs list it) */
export interface ProtectedKind {
  name: string;
  trustedBy: string;
}

/**
 * .what = the names trusted wherever they are, at any depth of the workspace: a directory with all it holds, or a file
 * .why = bhrain, Claude Code, Qwen Code, Gemini CLI, editors and git read them from whichever directory they are started
 *        in (a monorepo's package, a nested checkout): a model that plants one escapes its confinement through whoever
 *        trusts it next, outside any sandbox
 */
export const PROTECTED_ANYWHERE: readonly ProtectedKind[] = [
  { name: '.bhrain', trustedBy: 'bhrain reads as its settings (hooks, MCP servers), skills and agents' },
  {
    name: '.claude',
    trustedBy: 'Claude Code reads as its settings, hooks, agents, commands and skills (bhrain too, its skills and agents)',
  },
  { name: '.agents', trustedBy: 'bhrain and other agents read as Agent Skills' },
  { name: '.mcp.json', trustedBy: 'bhrain and Claude Code start MCP servers from' },
  { name: '.qwen', trustedBy: 'Qwen Code reads as its settings and MCP servers' },
  { name: '.gemini', trustedBy: 'Gemini CLI reads as its settings, MCP servers and commands' },
  { name: '.cursor', trustedBy: 'Cursor reads as its rules and MCP servers' },
  { name: '.vscode', trustedBy: 'VS Code reads as settings and tasks it runs' },
  { name: '.idea', trustedBy: 'JetBrains IDEs read as settings and run configurations' },
  { name: '.gitmodules', trustedBy: 'git follows for submodules' },
];

/**
 * .what = the names trusted at the workspace's top only: what a shell, git and ripgrep read from a home directory
 * .why = the workspace may be a home directory; deeper, no program reads them
 */
export const PROTECTED_AT_ROOT: readonly ProtectedKind[] = [
  { name: '.gitconfig', trustedBy: 'git reads as configuration (hooks, fsmonitor, aliases run code)' },
  { name: '.bashrc', trustedBy: 'bash runs at start' },
  { name: '.bash_profile', trustedBy: 'bash runs at login' },
  { name: '.zshrc', trustedBy: 'zsh runs at start' },
  { name: '.zprofile', trustedBy: 'zsh runs at login' },
  { name: '.profile', trustedBy: 'a login shell runs' },
  { name: '.ripgreprc', trustedBy: 'ripgrep reads as its options' },
];

/**
 * .what = what git trusts in a git directory, wherever the git directory is (`.git`, a submodule's `.git/modules/<name>`,
 *         a worktree's `.git/worktrees/<name>`, a bare repository): its configuration, its hooks, the files that send git
 *         to another directory's configuration (commondir, gitdir), and info/ (attributes and excludes that hide changes)
 * .why = git runs what these say (core.fsmonitor on every `git status`, hooks), and no diff shows them; objects, refs, the
 *        index, logs and HEAD stay writable, so the model can commit
 */
export const PROTECTED_IN_GIT_DIR: readonly ProtectedKind[] = [
  { name: 'config', trustedBy: 'git reads as configuration (fsmonitor, hooks, aliases, filters run code)' },
  { name: 'config.worktree', trustedBy: 'git reads as configuration (fsmonitor, hooks, aliases, filters run code)' },
  { name: 'hooks', trustedBy: 'git runs as code' },
  { name: 'info', trustedBy: 'git reads as attributes and excludes (which hide changes from git status and diff)' },
  { name: 'commondir', trustedBy: 'git follows to another directory for its configuration and hooks' },
  { name: 'gitdir', trustedBy: 'git follows to another directory for its configuration and hooks' },
];

/** .what = a `.git` entry that is a file: git follows it to the git directory it names */
export const GITLINK: ProtectedKind = {
  name: '.git',
  trustedBy: 'git follows to the git directory it names (its configuration and hooks)',
};

/** .what = a protected entry: its path (absolute), as the docs and notes show it (relative; a directory with a trailing
 *         /), and who trusts it */
export interface ProtectedEntry {
  path: string;
  shown: string;
  trustedBy: string;
}

const byName = (kinds: readonly ProtectedKind[]) => new Map(kinds.map((kind) => [kind.name, kind]));
const ANYWHERE = byName(PROTECTED_ANYWHERE);
const AT_ROOT = byName(PROTECTED_AT_ROOT);
const IN_GIT_DIR = byName(PROTECTED_IN_GIT_DIR);

/**
 * .what = whether a directory's entries make it a git directory, as git itself decides: a HEAD, and objects and refs
 *         (or a commondir that lends them)
 * .why = a bare repository or a submodule's git directory has no `.git` in its name; its configuration is as trusted
 */
export const isGitDirByEntries = (names: ReadonlySet<string>): boolean =>
  names.has('HEAD') && ((names.has('objects') && names.has('refs')) || names.has('commondir'));

/** .what = whether a directory on disk is a git directory (isGitDirByEntries, with a stat per entry) */
export const isGitDirOnDisk = (dir: string): boolean => {
  const names = new Set(['HEAD', 'objects', 'refs', 'commondir'].filter((name) => lstatSync(join(dir, name), { throwIfNoEntry: false })));
  return isGitDirByEntries(names);
};

/**
 * .what = the protected kind of one entry, by its name and what holds it: a name trusted anywhere, a name trusted at
 *         the workspace's top, a part of a git directory, or a `.git` that is a file (a gitlink); null when none
 * .why = the one rule every check applies: the write and edit tools before and as they open a file, bash's sandbox when
 *        it binds what exists, the sweep after each bash call for what a command created
 */
export const kindOfEntry = (input: { name: string; atRoot: boolean; inGitDir: boolean; isFile?: boolean }): ProtectedKind | null =>
  ANYWHERE.get(input.name) ??
  (input.atRoot ? AT_ROOT.get(input.name) : undefined) ??
  (input.inGitDir ? IN_GIT_DIR.get(input.name) : undefined) ??
  (input.name === '.git' && input.isFile ? GITLINK : null) ??
  null;

/**
 * .what = the protected entry a real path inside the workspace is, or lies in; null when it is none
 * .why = the write and edit tools refuse (ask about) such a path whatever its depth: `pkg/.bhrain/settings.json`,
 *        `vendor/lib/.git/hooks/pre-commit`, `.git/modules/lib/config`, `.git/commondir`
 * .note = a part of a git directory is judged by its name anywhere under a `.git` (the repository's, a submodule's under
 *         `.git/modules`, a worktree's), and elsewhere only when its directory is, on disk, what git needs of one
 *         (isGitDirOnDisk: a bare repository)
 */
export const findProtected = (workspace: string, path: string): ProtectedEntry | null => {
  if (!isUnder(workspace, path) || path === workspace) return null;
  const names = relative(workspace, path).split('/');
  let dir = workspace;
  let underDotGit = false;
  for (const [index, name] of names.entries()) {
    const entry = join(dir, name);
    const inGitDir = IN_GIT_DIR.has(name) && (underDotGit || isGitDirOnDisk(dir));
    // a `.git` that is a file, or that a write would make one (the last name, absent)
    const found = name === '.git' ? lstatSync(entry, { throwIfNoEntry: false }) : undefined;
    const isFile = name === '.git' && (found ? found.isFile() : index === names.length - 1);
    const kind = kindOfEntry({ name, atRoot: index === 0, inGitDir, isFile });
    // a directory is shown with its trailing /, as the docs list them: it is protected with all it holds
    const isDir = index < names.length - 1 || lstatSync(entry, { throwIfNoEntry: false })?.isDirectory() === true;
    if (kind) return { path: entry, shown: `${relative(workspace, entry)}${isDir ? '/' : ''}`, trustedBy: kind.trustedBy };
    underDotGit ||= name === '.git';
    dir = entry;
  }
  return null;
};

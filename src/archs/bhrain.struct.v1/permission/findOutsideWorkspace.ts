import { statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

import { resolveRealPath } from './resolveRealPath.js';

/** tools whose path input names a file they change */
export const WRITING_TOOLS: ReadonlySet<string> = new Set(['write', 'edit']);

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

/** .what = whether path is root or lies beneath it (both absolute, normalized) */
export const isWithin = (root: string, path: string): boolean => {
  const inside = relative(root, path);
  return inside === '' || (inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside));
};

/** .what = the protected path a real path inside the workspace is, or lies in; null when it is none of them */
export const findProtected = (workspace: string, path: string): { path: string; trustedBy: string } | null =>
  PROTECTED_PATHS.find((each) => isWithin(join(workspace, each.path), path)) ?? null;

/** .what = the real path a writing call names, every symlink resolved; null for a call that writes no named file */
export const findWriteTarget = (input: { toolName: string; toolInput: Record<string, unknown>; cwd: string }): string | null =>
  WRITING_TOOLS.has(input.toolName) && typeof input.toolInput.path === 'string'
    ? resolveRealPath(resolve(input.cwd, input.toolInput.path))
    : null;

/**
 * .what = the real path a writing call would change, when it lies outside the workspace; null when inside
 * .why = `../`, absolute paths and symlinks that point out (dangling ones too) all land outside; the guard layer asks
 *        before such a write
 */
export const findOutsideWorkspace = (input: { toolName: string; toolInput: Record<string, unknown>; cwd: string }): string | null => {
  const target = findWriteTarget(input);
  return target === null || isWithin(resolveRealPath(resolve(input.cwd)), target) ? null : target;
};

/**
 * .what = the real path a writing call would change, when it is one of the workspace's PROTECTED_PATHS, with who trusts it
 * .why = a program that runs outside the sandbox trusts it: the guard layer asks before such a write
 */
export const findProtectedTarget = (input: {
  toolName: string;
  toolInput: Record<string, unknown>;
  cwd: string;
}): { realPath: string; trustedBy: string } | null => {
  const target = findWriteTarget(input);
  if (target === null) return null;
  const workspace = resolveRealPath(resolve(input.cwd));
  const found = isWithin(workspace, target) ? findProtected(workspace, target) : null;
  return found ? { realPath: target, trustedBy: found.trustedBy } : null;
};

/**
 * .what = the real path and link count of the existing file a writing call would change, when it has other hard links;
 *         null otherwise
 * .why = a hard link (`ln ../outside/t hl`) aliases a file that may lie outside, and no path check can see where the other
 *        names are; the guard layer asks before such a write
 */
export const findHardLinkedTarget = (input: {
  toolName: string;
  toolInput: Record<string, unknown>;
  cwd: string;
}): { realPath: string; links: number } | null => {
  const target = findWriteTarget(input);
  if (target === null) return null;
  try {
    const stats = statSync(target);
    return stats.isFile() && stats.nlink > 1 ? { realPath: target, links: stats.nlink } : null;
  } catch {
    // missing or unreadable: nothing is linked yet, and the tool reports the error itself
    return null;
  }
};

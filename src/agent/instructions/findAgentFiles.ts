import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { PROJECT_CONFIG_PATHS } from '../../sandbox/protectedPaths.js';
import { findRepoRoot, listProjectDirs } from '../git/findRepoRoot.js';
import { getBhrainConfigDir } from '../config/getBhrainConfigDir.js';

/** .what = what is looked for: Agent Skills (`<dir>/<name>/SKILL.md`) or agent files (`<dir>/<name>.md`) */
export type AgentFileKind = 'skills' | 'agents';

/** .what = the folders, in each directory from the repository root down to cwd, that hold each kind, bhrain's first */
export const AGENT_FILE_FOLDERS: Readonly<Record<AgentFileKind, readonly string[]>> = {
  skills: PROJECT_CONFIG_PATHS.skills,
  agents: PROJECT_CONFIG_PATHS.agents,
};

/** .what = one file found: where, whether the user's own (the bhrain config dir) or the project's */
export interface FoundAgentFile {
  /** absolute: the SKILL.md, or the agent's .md */
  path: string;
  scope: 'user' | 'project';
}

/** .what = a directory's entries, or none when it is absent or unreadable (the usual case: nothing to find there) */
const listDir = async (dir: string) => readdir(dir, { withFileTypes: true }).catch(() => []);

/** .what = whether a path is a regular file (a symlink to one counts) */
const isFile = async (path: string) =>
  stat(path).then(
    (stats) => stats.isFile(),
    () => false,
  );

/** .what = the files of one kind in one folder, sorted by name */
const findIn = async (dir: string, kind: AgentFileKind): Promise<string[]> => {
  const entries = (await listDir(dir)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const found: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const path = kind === 'skills' ? join(dir, entry.name, 'SKILL.md') : join(dir, entry.name);
    if (kind === 'agents' && !entry.name.endsWith('.md')) continue;
    // a directory entry may be a symlink: stat follows it
    if (await isFile(path)) found.push(path);
  }
  return found;
};

/**
 * .what = the Agent Skills or agent files for a working directory, nearest first: in cwd, then each parent up to the
 *         repository root (cwd alone outside one), each directory's .bhrain folder before .claude (and .agents); then the
 *         user's own, in the bhrain config dir (`skills/`, `agents/`)
 * .why = a readdir per folder and nothing more, so a run without any such file pays nothing else: the front matter (and
 *        the YAML parser) is read only for files found. Nearest first: a project's skill wins over the user's of the
 *        same name, as the nearer AGENTS.md does
 */
export const findAgentFiles = async (
  input: { cwd: string; kind: AgentFileKind },
  context: { env?: Record<string, string | undefined> } = {},
): Promise<FoundAgentFile[]> => {
  const cwd = resolve(input.cwd);
  const dirs = listProjectDirs(cwd, await findRepoRoot({ cwd })).reverse();
  const project = dirs.flatMap((dir) => AGENT_FILE_FOLDERS[input.kind].map((folder) => join(dir, folder)));
  const user = join(getBhrainConfigDir(context.env ?? process.env), input.kind);
  const found = await Promise.all([...project, user].map((dir) => findIn(dir, input.kind)));
  return found.flatMap((paths, index) => paths.map((path) => ({ path, scope: index < project.length ? 'project' : 'user' }) as const));
};

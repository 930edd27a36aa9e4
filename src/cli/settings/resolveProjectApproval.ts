import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { resolve } from 'node:path';

import { namesOfBuiltinTools } from '../../agent/permission/readCallEffect.js';
import type { BhrainPermissionRules } from '../../agent/permission/genRulesGuard.js';
import type { BashSandboxMode } from '../../sandbox/BashSandbox.js';
import { normalizeDomainPattern } from '../../sandbox/network/allowedDomains.js';

/**
 * .what = whether the user approved the project a run is in, and how: by --trust-project, or by its repository root's
 *         real path in the user settings' `trustedProjects`; the one approval that lets a project loosen what runs
 *         unconfined, and starts its MCP servers
 * .why = a project's files come with the repository: a clone, a pull request or an earlier run of a model can plant them,
 *        so only the user's own command line or own settings file can approve a project, never a project file
 */
export interface ProjectApproval {
  /** the repository root (else the working directory), real path */
  root: string;
  trusted: boolean;
  via: '--trust-project' | 'trustedProjects' | null;
}

/** .what = a path of the user's file as a real path: `~/` is the home directory; one that does not exist stays as given */
const readUserPath = async (path: string, env: Record<string, string | undefined>): Promise<string> => {
  const expanded = path === '~' || path.startsWith('~/') ? `${env.HOME ?? homedir()}${path.slice(1)}` : path;
  return realpath(resolve(expanded)).catch(() => resolve(expanded));
};

/** .what = the approval of a run's project, from the flag and the user's file */
export const resolveProjectApproval = async (
  input: { root: string; trustProject: boolean; trustedProjects: readonly string[] },
  context: { env: Record<string, string | undefined> },
): Promise<ProjectApproval> => {
  const root = await realpath(input.root).catch(() => resolve(input.root));
  if (input.trustProject) return { root, trusted: true, via: '--trust-project' };
  const trusted = (await Promise.all(input.trustedProjects.map((path) => readUserPath(path, context.env)))).includes(root);
  return { root, trusted, via: trusted ? 'trustedProjects' : null };
};

const SANDBOX_LOOSENESS: Record<BashSandboxMode, number> = { 'read-only': 0, 'workspace-write': 1, off: 2 };
const GUARD_LOOSENESS: Record<string, number> = { readOnly: 0, promptForWrites: 1, allowAll: 2 };

/** .what = an allow rule that may hand a hidden path back (`read(~/.ssh)`, `read(/etc/shadow)`): read with a path from / or ~ */
const isReadHandback = (rule: string): boolean => /^\s*read\s*\(\s*[~/]/i.test(rule);

/**
 * .what = whether a permission value loosens another: a looser builtin guard, allow rules the other does not give, or
 *         (whatever the other is, allowAll too) a read(<path>) rule that may hand back what is hidden from the model
 */
const loosensPermission = (value: string | BhrainPermissionRules, than: string | BhrainPermissionRules): boolean => {
  const handbacks = typeof value === 'string' ? [] : (value.allow ?? []).filter(isReadHandback);
  if (handbacks.some((rule) => typeof than === 'string' || !(than.allow ?? []).includes(rule))) return true;
  if (than === 'allowAll') return false;
  if (typeof value === 'string') return (GUARD_LOOSENESS[value] ?? 2) > (typeof than === 'string' ? (GUARD_LOOSENESS[than] ?? 2) : 1);
  // rules: an allow rule beyond what the other allows already (readOnly and promptForWrites allow the tools that read)
  const allowedBefore = new Set(typeof than === 'string' ? namesOfBuiltinTools('read') : (than.allow ?? []));
  return (value.allow ?? []).some((rule) => !allowedBefore.has(rule));
};

/**
 * .what = the settings a project file may only tighten, and whether a value loosens the value that would apply without
 *         any project file
 * .why = a looser sandbox or network, a looser guard, more allow rules, more directories to change, more variables passed to the commands, or a
 *        masked credential's value sent to more hosts widen what runs unconfined, what it reads or what the model may
 *        use: from a project file they take effect only when the user approved the project; a tighter value needs no
 *        approval
 */
export const LOOSENING: {
  sandbox: (value: BashSandboxMode, than: BashSandboxMode) => boolean;
  allowNetwork: (value: boolean, than: boolean) => boolean;
  permission: (value: string | BhrainPermissionRules, than: string | BhrainPermissionRules) => boolean;
  allowedDomains: (value: readonly string[], than: readonly string[]) => boolean;
  maskEnv: (value: Readonly<Record<string, readonly string[]>>, than: Readonly<Record<string, readonly string[]>>) => boolean;
  allowUnixSockets: (value: readonly string[], than: readonly string[]) => boolean;
  passEnv: (value: readonly string[], than: readonly string[]) => boolean;
  allowedTools: (value: readonly string[], than: readonly string[]) => boolean;
  additionalDirectories: (value: readonly string[], than: readonly string[]) => boolean;
} = {
  sandbox: (value, than) => SANDBOX_LOOSENESS[value] > SANDBOX_LOOSENESS[than],
  allowNetwork: (value, than) => value && !than,
  permission: loosensPermission,
  // a host the network would not reach without the project file (patterns compared as written, normalized)
  allowedDomains: (value, than) => value.some((pattern) => !than.includes(pattern)),
  // a credential's value sent to a host it would not go to without the project file: it gives the model its use, and
  // its hosts are allowed domains
  maskEnv: (value, than) =>
    Object.entries(value).some(([name, hosts]) =>
      hosts.some((host) => !(than[name] ?? []).map(normalizeDomainPattern).includes(normalizeDomainPattern(host))),
    ),
  // a host socket bash would not reach without the project file (paths compared as written)
  allowUnixSockets: (value, than) => value.some((path) => !than.includes(path)),
  // a variable the commands would not get without the project file: a project could name the user's tokens
  passEnv: (value, than) => value.some((name) => !than.includes(name)),
  // a call run without asking that would have been asked about without the project file
  allowedTools: (value, than) => value.some((rule) => !than.includes(rule)),
  // a directory the run could change that it could not without the project file (paths compared as written)
  additionalDirectories: (value, than) => value.some((dir) => !than.includes(dir)),
};

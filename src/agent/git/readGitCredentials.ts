import { lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';

import { parseGitConfig } from './parseGitConfig.js';

/** a credential shorter than this is too likely to occur by chance to be worth replacing (as for the env's secrets) */
const MIN_CREDENTIAL_CHARS = 8;

/** include.path and includeIf.*.path are followed this deep, so a loop of includes ends */
const MAX_INCLUDE_DEPTH = 10;

/** a git config file bigger than this is not read (git's own are a few KB) */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** .what = a credential found in git's config: the key it was under (`git-config:<section>.<name>`) and its value */
export interface GitCredential {
  name: string;
  value: string;
}

/** .what = one git config file read: its real path, its text, and whether a credential was found in it */
export interface GitConfigFile {
  path: string;
  text: string;
  hasCredentials: boolean;
}

/** .what = the credentials in the git config around a directory, and the files they were read from */
export interface GitCredentials {
  secrets: readonly GitCredential[];
  files: readonly GitConfigFile[];
  /** `dev:ino:size:mtime` of every config file looked at (absent ones too): when it changes, the config did */
  signature: string;
  /** config files git would read that were not (not a regular file, over MAX_CONFIG_BYTES, unreadable, or an include
   *  named `~user/…` or `%(prefix)/…`): what they hold is unknown */
  unread: readonly string[];
}

/** .what = no repository, nothing read */
export const NO_GIT_CREDENTIALS: GitCredentials = { secrets: [], files: [], signature: '', unread: [] };

/** .what = a string decoded from base64 when it is valid base64 of UTF-8 text, else null */
const decodeBase64 = (text: string): string | null => {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64').replace(/=+$/, '') !== text.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '')) return null;
  const decoded = bytes.toString('utf8');
  return decoded.includes('\uFFFD') ? null : decoded;
};

/** .what = a percent-encoded string decoded, or as it is when it is not validly encoded */
const percentDecoded = (text: string): string => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/**
 * .what = the secrets one config value holds: an `http.*.extraheader`'s header value and credentials (a basic one
 *         decoded too: `x-access-token:<token>` and the token), and the password (or token-like user) of any URL's
 *         `user:password@` in the value or the key, percent-decoded too
 * .why = actions/checkout leaves its token as `AUTHORIZATION: basic base64(x-access-token:<token>)`; remotes carry
 *        `https://user:token@host`; each form the model could meet is its own value to redact
 */
const credentialsOf = (key: string, value: string): string[] => {
  const found: string[] = [];
  if (/^http\.(.+\.)?extraheader$/.test(key.toLowerCase())) {
    const header = value.slice(value.indexOf(':') + 1).trim();
    found.push(header);
    const scheme = /^(\S+)\s+(\S+)$/.exec(header);
    if (scheme) {
      found.push(scheme[2]);
      const decoded = scheme[1].toLowerCase() === 'basic' ? decodeBase64(scheme[2]) : null;
      if (decoded !== null) found.push(decoded, decoded.slice(decoded.indexOf(':') + 1));
    }
  }
  // a URL is a value (remote.*.url), or a subsection of the key (url.<base>.insteadOf, http.<url>.*)
  for (const match of `${key}\n${value}`.matchAll(/[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/@\s]+)@/g)) {
    const userinfo = match[1];
    const colon = userinfo.indexOf(':');
    const secret = colon >= 0 ? userinfo.slice(colon + 1) : userinfo;
    found.push(secret, percentDecoded(secret));
  }
  return [...new Set(found)].filter((secret) => secret.length >= MIN_CREDENTIAL_CHARS);
};

/** .what = where a repository's git lives: the directory holding `.git`, its git dir, and the common dir git reads config from */
export interface GitDirs {
  root: string;
  gitDir: string;
  commonDir: string;
}

/** .what = a path in git's reading: `relative` from `dir` as a plain join, its `..` left to the kernel (after links), as git does */
const realPathOf = (dir: string, relative: string): string => {
  const path = isAbsolute(relative) ? relative : `${dir}/${relative}`;
  try {
    return realpathSync.native(path);
  } catch {
    // absent: git, pointed at it, finds no repository there
    return path;
  }
};

/**
 * .what = the git dir and the common dir of the repository holding cwd: `.git` a directory (or a link to one), or a
 *         `gitdir:` file (a worktree, a submodule); the git dir's `commondir` file (a worktree's) names the common dir.
 *         Each is a real path, resolved as the kernel does (a `..` after a link goes up from the link's target)
 * .why = the config files read here must be those git reads; bhrain's own git is then pointed at exactly these
 *        directories (runHardenedGit), so the two cannot differ
 */
export const findGitDirs = (cwd: string): GitDirs | null => {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const dotGit = join(dir, '.git');
    let found: ReturnType<typeof lstatSync> | undefined;
    try {
      found = lstatSync(dotGit, { throwIfNoEntry: false });
      if (found?.isSymbolicLink()) found = statSync(dotGit, { throwIfNoEntry: false });
    } catch {
      // a directory this process may not look into holds no repository it can read
      found = undefined;
    }
    if (found) {
      let gitDir = realPathOf(dir, '.git');
      if (!found.isDirectory()) {
        // a worktree or a submodule: `gitdir: <path>`, relative to the directory holding the file
        const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readSmall(dotGit) ?? '');
        if (!pointer) return null;
        gitDir = realPathOf(dir, pointer[1]);
      }
      const common = readSmall(join(gitDir, 'commondir'))?.replace(/[\r\n]+$/, '');
      return { root: dir, gitDir, commonDir: common ? realPathOf(gitDir, common) : gitDir };
    }
    if (dirname(dir) === dir) return null;
  }
};

/** .what = a small file's text, or null when it is missing, unreadable or too big */
const readSmall = (path: string): string | null => {
  try {
    const stats = statSync(path, { throwIfNoEntry: false });
    if (!stats?.isFile() || stats.size > MAX_CONFIG_BYTES) return null;
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

/** .what = a path's stat as a signature: it changes when the file is replaced or written; `-` when absent */
const signatureOf = (path: string): string => {
  try {
    const stats = statSync(path, { throwIfNoEntry: false });
    return stats ? `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}` : '-';
  } catch {
    // under a file, or not ours to look into
    return '-';
  }
};

/**
 * .what = the config files git reads for the repository around cwd, as far as credentials go: the repository's
 *         (the common dir's `config`, a worktree's `config.worktree`), the user's (~/.gitconfig,
 *         $XDG_CONFIG_HOME/git/config), and every file they include
 * .why = the token actions/checkout writes sits in the repository's config, or (v6) in a file it includes
 */
const listGitConfigRoots = (cwd: string, env: Record<string, string | undefined>): string[] => {
  const home = env.HOME || homedir();
  const dirs = findGitDirs(cwd);
  return [
    ...(dirs ? [join(dirs.commonDir, 'config'), join(dirs.gitDir, 'config.worktree')] : []),
    join(home, '.gitconfig'),
    join(env.XDG_CONFIG_HOME || join(home, '.config'), 'git', 'config'),
  ];
};

/**
 * .what = the credentials in the git config around cwd: `http.*.extraheader` values and `user:password@` in URLs, with
 *         their decoded forms, and the files they were read from; a file that cannot be read is skipped, never an error
 * .why = read once per run, they are redacted from everything the model reads and from the answer, the run record and
 *        the refs; the sandbox shows the files that hold one with it redacted
 */
export const readGitCredentials = (input: { cwd: string }, context: { env: Record<string, string | undefined> }): GitCredentials => {
  const home = context.env.HOME || homedir();
  const files: GitConfigFile[] = [];
  const secrets = new Map<string, string>();
  const signatures: string[] = [];
  const seen = new Set<string>();
  const unread: string[] = [];
  const visit = (path: string, depth: number): void => {
    signatures.push(`${path}=${signatureOf(path)}`);
    const text = readSmall(path);
    if (text === null) {
      // an absent file is nothing to read, for git too; one that is there but was not read holds what is not known
      if (signatureOf(path) !== '-') unread.push(path);
      return;
    }
    let real: string;
    try {
      real = realpathSync.native(path);
    } catch {
      return;
    }
    if (seen.has(real)) return;
    seen.add(real);
    let hasCredentials = false;
    const includes: string[] = [];
    for (const { key, value } of parseGitConfig(text)) {
      for (const secret of credentialsOf(key, value)) {
        hasCredentials = true;
        // named without the subsection, which may hold the credential itself (url.https://<token>@host/.insteadOf)
        if (!secrets.has(secret))
          secrets.set(secret, `git-config:${key.slice(0, key.indexOf('.'))}.${key.slice(key.lastIndexOf('.') + 1)}`);
      }
      // include.path and includeIf.<condition>.path: read whatever the condition, since more files only redact more
      // a relative path is joined to the including file's path as named (not its real path), as git joins it
      if (/^include(if\..*)?\.path$/i.test(key) && value) {
        if (value.startsWith('~/')) includes.push(`${home}/${value.slice(2)}`);
        else if (value.startsWith('~') || value.startsWith('%(')) unread.push(value);
        else includes.push(isAbsolute(value) ? value : `${dirname(path)}/${value}`);
      }
    }
    files.push({ path: real, text, hasCredentials });
    if (depth < MAX_INCLUDE_DEPTH) for (const include of includes) visit(include, depth + 1);
  };
  for (const root of listGitConfigRoots(input.cwd, context.env)) visit(root, 0);
  return {
    secrets: [...secrets].map(([value, name]) => ({ name, value })),
    files,
    signature: signatures.join('\n'),
    unread,
  };
};

/**
 * .what = the signature readGitCredentials would give now, from the files it read last time: cheaper than reading them
 * .why = the bash sandbox shows git's config with its credentials redacted, and is told when that view is stale
 */
export const signGitConfigFiles = (read: GitCredentials): string =>
  read.signature
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const path = line.slice(0, line.lastIndexOf('='));
      return `${path}=${signatureOf(path)}`;
    })
    .join('\n');

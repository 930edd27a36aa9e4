import type { Dirent } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

import ignore, { type Ignore } from 'ignore';

import { IGNORE_FILE_MAX_BYTES } from './constants.js';
import { readBoundedFile } from './readBoundedFile.js';

type TestResult = ReturnType<Ignore['test']>;

/** the rules of one ignore file: all of them, and those that match a bare name, which most rules do */
interface RuleFile {
  /** the directory the rules are relative to, with a trailing '/' */
  base: string;
  all: Ignore;
  /** only the rules without an inner '/': in a directory no path rule can reach, a name is tested against these alone */
  names: Ignore;
  /** the answers of `names`, by name: a tree repeats names, and this is the walk's hottest path */
  nameResults: Map<string, TestResult>;
  /** for each rule with an inner '/', its leading literal segments: the rule can only match under them */
  pathPrefixes: string[][];
}

/** .what = the rules in force in one walked directory: the rule files from it up to its repository's root, nearest first */
interface Scope {
  inRepo: boolean;
  /** nearest .gitignore first, up to the repository root's, then .git/info/exclude, then the global excludes file */
  files: RuleFile[];
  /** what an entry of this directory is tested against: a matcher and the prefix that makes a name relative to it, or
   *  the name rules alone with their answers kept by name */
  checks: ({ matcher: Ignore; prefix: string } | { matcher: Ignore; results: Map<string, TestResult> })[];
}

/**
 * .what = git's ignore rules for one walk: which entries of a walked directory git ignores
 * .why = grep and glob skip what git ignores, as rg does; the walk tells these rules each directory it reads, so a
 *        directory's .gitignore is read from the listing the walk made anyway, never looked for with an extra call
 */
export interface GitIgnores {
  /** the walk's root, or a directory between it and its repository's root, is ignored: a path named explicitly, so
   *  the search runs without ignore rules (rg would search it too) */
  rootIgnored: boolean;
  /** reads the rules a directory adds (its .gitignore; .git/info/exclude at a repository root) from its listing */
  enterDirectory: (directory: string, entries: readonly Dirent[]) => Promise<void>;
  /** whether git ignores an entry of a directory already entered */
  isIgnored: (directory: string, name: string, isDirectory: boolean) => boolean;
}

/** .what = the segments of a pattern that are plain text, up to the first with a glob character or escape */
const literalPrefix = (segments: string[]): string[] => {
  const prefix: string[] = [];
  for (const segment of segments) {
    if (/[*?[\\]/.test(segment)) break;
    prefix.push(segment);
  }
  return prefix;
};

/**
 * .what = an ignore file's text as rules ready to test, sorted into name rules and path rules
 * .why = a name rule gives the same answer for a name in any directory, so testing bare names lets `ignore` answer
 *        each distinct name once; path rules are tested with the whole path, and only where their prefix allows
 */
const parseRuleFile = (base: string, text: string): RuleFile => {
  const nameLines: string[] = [];
  const pathPrefixes: string[][] = [];
  for (const line of text.split(/\r?\n/)) {
    const body = line.trimEnd().replace(/^!/, '').replace(/\/$/, '');
    if (body === '' || line.startsWith('#')) continue;
    // '**/name' matches a name at any depth, as 'name' does
    if (!body.replace(/^(\*\*\/)+/, '').includes('/')) nameLines.push(line);
    else pathPrefixes.push(literalPrefix(body.split('/').filter((segment, index) => index > 0 || segment !== '')));
  }
  const all = ignore({ ignorecase: false }).add(text);
  const names = pathPrefixes.length === 0 ? all : ignore({ ignorecase: false }).add(nameLines);
  return { base, all, names, nameResults: new Map(), pathPrefixes };
};

/** .what = the matchers an entry of a directory is tested against, one per rule file, nearest first */
const checksFor = (directory: string, files: RuleFile[]): Scope['checks'] =>
  files.map((file) => {
    const relative = directory.slice(file.base.length);
    const segments = relative.split('/').slice(0, -1);
    const reachable = file.pathPrefixes.some((prefix) => {
      for (let index = 0; index < Math.min(prefix.length, segments.length); index++) if (prefix[index] !== segments[index]) return false;
      return true;
    });
    return reachable ? { matcher: file.all, prefix: relative } : { matcher: file.names, results: file.nameResults };
  });

/** .what = an entry tested against a scope: the nearest rule file with an opinion decides, as in git */
const ignoredIn = (scope: Scope, name: string, isDirectory: boolean): boolean => {
  const suffix = isDirectory ? `${name}/` : name;
  for (const check of scope.checks) {
    let result = 'results' in check ? check.results.get(suffix) : undefined;
    if (result === undefined) {
      try {
        result = check.matcher.test('results' in check ? suffix : check.prefix + suffix);
      } catch {
        // a name `ignore` cannot test (such as '...') is not ignored
        result = { ignored: false, unignored: false };
      }
      if ('results' in check) check.results.set(suffix, result);
    }
    if (result.ignored) return true;
    if (result.unignored) return false;
  }
  return false;
};

/**
 * .what = an ignore file's text: a regular file only, its first IGNORE_FILE_MAX_BYTES (whole lines); undefined when
 *         absent, unreadable or not a regular file
 * .why = `.gitignore`, info/exclude and the global file are the workspace's to plant: a FIFO must not hang the walk,
 *        nor a link to /dev/zero feed it without end
 */
const readText = async (path: string): Promise<string | undefined> => {
  const read = await readBoundedFile({ path, maxBytes: IGNORE_FILE_MAX_BYTES }).catch(() => null);
  if (read?.kind !== 'read') return undefined;
  const text = read.bytes.toString('utf8');
  return read.more ? text.slice(0, text.lastIndexOf('\n') + 1) : text;
};

/** .what = the value of excludesfile in a git config text, as rg reads it (any section, last wins, quotes dropped) */
const parseExcludesFile = (config: string | undefined): string | undefined => {
  const matches = [...(config ?? '').matchAll(/^\s*excludesfile\s*=\s*"?\s*(\S+?)\s*"?\s*$/gim)];
  return matches.length === 0 ? undefined : matches[matches.length - 1][1];
};

/**
 * .what = the global excludes file: core.excludesFile from ~/.gitconfig, else from $XDG_CONFIG_HOME/git/config, else
 *         $XDG_CONFIG_HOME/git/ignore (~/.config/git/ignore)
 * .why = git and rg skip what it lists in every repository; read as rg reads it, so both engines skip the same files
 */
const findGlobalExcludesFile = async (env: NodeJS.ProcessEnv): Promise<string> => {
  const home = env.HOME || homedir();
  const configHome = env.XDG_CONFIG_HOME || join(home, '.config');
  const named =
    parseExcludesFile(await readText(join(home, '.gitconfig'))) ?? parseExcludesFile(await readText(join(configHome, 'git', 'config')));
  if (named === undefined) return join(configHome, 'git', 'ignore');
  return named.startsWith('~/') ? join(home, named.slice(2)) : named;
};

/**
 * .what = loads git's ignore rules around a walk's root: the .gitignore files from its repository's root down to it,
 *         .git/info/exclude and the global excludes file; each directory the walk enters adds its own .gitignore
 * .why = rules follow git (and rg): a nearer .gitignore overrides a farther one, then info/exclude, then the global
 *        file; they apply only inside a repository, and a nested repository (a directory holding .git) starts afresh
 * .note = the global file's rules are relative to each repository's root, as git reads them
 */
export const loadGitIgnores = async (input: { root: string; env?: NodeJS.ProcessEnv }): Promise<GitIgnores> => {
  const env = input.env ?? process.env;
  const root = resolve(input.root);
  const scopes = new Map<string, Scope>();
  let globalText: Promise<string | undefined> | undefined;
  const readGlobal = () => (globalText ??= findGlobalExcludesFile(env).then(readText));

  /** the scope of a directory from its parent's, and whether it holds .gitignore or .git */
  const scopeOf = async (directory: string, parent: Scope | undefined, has: { gitignore: boolean; git: boolean }): Promise<Scope> => {
    const inRepo = has.git || (parent?.inRepo ?? false);
    if (!inRepo) return { inRepo, files: [], checks: [] };
    const own = has.gitignore ? await readText(`${directory}.gitignore`) : undefined;
    const files: RuleFile[] = own === undefined ? [] : [parseRuleFile(directory, own)];
    if (has.git) {
      // a repository root: the rules of directories above it no longer apply
      const exclude = await readText(`${directory}.git/info/exclude`);
      if (exclude !== undefined) files.push(parseRuleFile(directory, exclude));
      const global = await readGlobal();
      if (global !== undefined) files.push(parseRuleFile(directory, global));
    } else files.push(...(parent?.files ?? []));
    return { inRepo, files, checks: checksFor(directory, files) };
  };

  // the directories from the root up; the nearest holding .git is the repository's root
  const chain: string[] = [];
  for (let directory = root; ; directory = dirname(directory)) {
    chain.push(directory);
    if (dirname(directory) === directory) break;
  }
  const exists = (path: string) =>
    lstat(path).then(
      () => true,
      () => false,
    );
  let repoIndex = -1;
  for (let index = 0; index < chain.length && repoIndex === -1; index++) if (await exists(join(chain[index], '.git'))) repoIndex = index;

  // the scope just above the root, and whether the root or a directory on the way down to it is ignored
  let above: Scope | undefined;
  let rootIgnored = false;
  for (let index = repoIndex; index >= 1; index--) {
    const directory = chain[index].endsWith('/') ? chain[index] : `${chain[index]}/`;
    above = await scopeOf(directory, above, { gitignore: true, git: index === repoIndex });
    if (ignoredIn(above, basename(chain[index - 1]), true)) rootIgnored = true;
  }
  const rootKey = root.endsWith('/') ? root : `${root}/`;
  const parentKey = (directory: string) => directory.slice(0, directory.lastIndexOf('/', directory.length - 2) + 1);
  const outside: Scope = { inRepo: false, files: [], checks: [] };
  let lastDirectory: string | undefined;
  let lastScope: Scope | undefined;

  return {
    rootIgnored,
    enterDirectory: async (directory, entries) => {
      let gitignore = false;
      let git = false;
      for (const entry of entries) {
        if (entry.name === '.gitignore' && entry.isFile()) gitignore = true;
        else if (entry.name === '.git') git = true;
      }
      const parent = directory === rootKey ? (above ?? outside) : scopes.get(parentKey(directory));
      scopes.set(directory, await scopeOf(directory, parent, { gitignore, git }));
    },
    isIgnored: (directory, name, isDirectory) => {
      // the walk asks about a directory's entries one after another: the last scope is most often the one asked for
      if (directory !== lastDirectory) {
        lastDirectory = directory;
        lastScope = scopes.get(directory);
      }
      return lastScope !== undefined && lastScope.checks.length > 0 && ignoredIn(lastScope, name, isDirectory);
    },
  };
};

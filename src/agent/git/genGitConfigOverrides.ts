import type { GitConfigEntry } from './parseGitConfig.js';

/**
 * .what = the config bhrain's own git always runs with, whatever any file says: no fsmonitor, no hooks, no pager, no
 *         editor, no askpass or credential helper, no external diff, no transport (a partial clone's lazy fetch would run
 *         ssh, helpers, `ext::` URLs), no submodule recursion, no untracked cache (a planted one could hide files)
 * .why = the few keys git runs on its own for status and ls-files, disarmed by name, so not even a key this reader
 *        missed could arm them; every other key that names a command is disarmed by kind (genGitConfigOverrides)
 */
export const HARDENED_GIT_CONFIG: ReadonlyArray<readonly [string, string]> = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.pager', 'cat'],
  ['core.editor', ':'],
  ['sequence.editor', ':'],
  ['core.askPass', ''],
  ['core.sshCommand', ''],
  ['credential.helper', ''],
  ['diff.external', ''],
  ['protocol.allow', 'never'],
  ['submodule.recurse', 'false'],
  ['status.submoduleSummary', 'false'],
  ['core.untrackedCache', 'false'],
];

/**
 * .what = the harmless value of a config key that names a command or a program, by its kind; null for a key of no such kind
 * .why = git's documented command keys follow a few shapes: whole sections of commands (alias.*, pager.*, filter.*),
 *        names that say so (…command, …cmd, …program, …helper, …hook, …driver, …editor, …pager, …textconv, …askpass,
 *        …proxy), and a handful of others (a remote's upload-pack and receive-pack, a tool's path, web.browser, a
 *        submodule's update, sendemail's server). A shape, not a list of keys, so a key git adds in the same shape is
 *        disarmed too. '' is "none" for each: git runs nothing for an empty command
 */
const harmlessValueOf = (key: string): string | null => {
  const section = key.slice(0, key.indexOf('.'));
  const name = key.slice(key.lastIndexOf('.') + 1);
  if (section === 'alias') return '';
  if (section === 'pager') return 'false';
  if (section === 'filter') return name === 'required' ? 'false' : '';
  if (section === 'submodule' && name === 'update') return 'none';
  if (/(command|cmd|program|helper|hook|driver|editor|pager|textconv|askpass|proxy)$/.test(name)) return '';
  if (section === 'remote' && /^(uploadpack|receivepack|vcs)$/.test(name)) return '';
  if (/^(difftool|mergetool|man|browser)$/.test(section) && name === 'path') return '';
  if (key === 'web.browser' || key === 'sendemail.smtpserver') return '';
  return null;
};

/**
 * .what = the `-c key=value` pairs that disarm every key of a command kind among config entries (a filter's clean,
 *         smudge and process emptied and required set false, whichever of its keys was found), then
 *         HARDENED_GIT_CONFIG; or the key that cannot be overridden from the command line (a subsection holding `=`, a
 *         NUL or bytes that are not UTF-8), so git is not run
 * .why = `-c` outranks every config file git reads, the repository's and the user's alike: what any file names to run is
 *        replaced by nothing, and the user's own config still sets everything else (safe.directory, excludesFile)
 */
export const genGitConfigOverrides = (entries: Iterable<GitConfigEntry>): { pairs: Array<[string, string]> } | { refused: string } => {
  const pairs = new Map<string, string>();
  for (const { key } of entries) {
    const value = harmlessValueOf(key);
    if (value === null) continue;
    if (/[=\0\uFFFD]/.test(key)) return { refused: key };
    if (key.startsWith('filter.')) {
      const driver = key.slice(0, key.lastIndexOf('.'));
      for (const name of ['clean', 'smudge', 'process']) pairs.set(`${driver}.${name}`, '');
      pairs.set(`${driver}.required`, 'false');
    } else pairs.set(key, value);
  }
  // the fixed ones last: -c's last word on a key is git's
  for (const [key, value] of HARDENED_GIT_CONFIG) {
    pairs.delete(key.toLowerCase());
    pairs.set(key, value);
  }
  return { pairs: [...pairs] };
};

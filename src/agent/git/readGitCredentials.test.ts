import { execFileSync } from 'node:child_process';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { genSecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import { readGitCredentials, signGitConfigFiles } from './readGitCredentials.js';
import { tempDir } from '#test-helpers/fs.js';

// the checkout token (and any user:password@ of a remote) is found in git's config, decoded forms too

const TOKEN = 'ghs_FAKEcheckoutTOKEN0123456789abcdef';
const basic = (userAndPassword: string) => Buffer.from(userAndPassword).toString('base64');

let base: string;
let home: string;
const env = () => ({ HOME: home, XDG_CONFIG_HOME: join(home, '.config') });
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-C', cwd, ...args], { env: { ...process.env, ...env() } });

beforeAll(async () => {
  base = tempDir('bhrain-gitcred-');
  home = join(base, 'home');
  await mkdir(home);
});
afterAll(async () => rm(base, { recursive: true, force: true }));

describe('readGitCredentials', () => {
  it("finds actions/checkout's extraheader, decoded: the header value, the base64, x-access-token:<token> and the token", async () => {
    const repo = join(base, 'checkout');
    git(base, 'init', '-q', repo);
    git(repo, 'config', '--local', 'http.https://github.com/.extraheader', `AUTHORIZATION: basic ${basic(`x-access-token:${TOKEN}`)}`);
    await mkdir(join(repo, 'src', 'deep'), { recursive: true });
    const found = readGitCredentials({ cwd: join(repo, 'src', 'deep') }, { env: env() });
    expect(found.secrets.map((secret) => secret.value)).toEqual([
      `basic ${basic(`x-access-token:${TOKEN}`)}`,
      basic(`x-access-token:${TOKEN}`),
      `x-access-token:${TOKEN}`,
      TOKEN,
    ]);
    expect(new Set(found.secrets.map((secret) => secret.name))).toEqual(new Set(['git-config:http.extraheader']));
    expect(found.files.filter((file) => file.hasCredentials).map((file) => file.path)).toEqual([join(repo, '.git', 'config')]);
  });

  it("finds user:password@ and token@ in URLs, percent-decoded too, and reads a worktree's common config and an included file", async () => {
    const main = join(base, 'main');
    git(base, 'init', '-q', main);
    git(main, '-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-q', '--allow-empty', '-m', 'first');
    git(main, 'remote', 'add', 'origin', 'https://deploy:p%40ssw0rd-0123@git.example.com/r.git');
    const included = join(base, 'runner-temp', 'git-credentials-1234.config');
    await mkdir(join(base, 'runner-temp'));
    await writeFile(included, `[url "https://${TOKEN}@github.com/"]\n\tinsteadOf = https://github.com/\n`);
    git(main, 'config', `includeIf.gitdir:${main}/.git.path`, included);
    const tree = join(base, 'tree');
    git(main, 'worktree', 'add', '-q', tree);
    // the worktree holds a `.git` file: gitdir: <main>/.git/worktrees/tree, whose commondir is <main>/.git
    const found = readGitCredentials({ cwd: tree }, { env: env() });
    expect(found.secrets.map((secret) => [secret.name, secret.value])).toEqual([
      ['git-config:remote.url', 'p%40ssw0rd-0123'],
      ['git-config:remote.url', 'p@ssw0rd-0123'],
      // named without its subsection, which holds the token itself
      ['git-config:url.insteadof', TOKEN],
    ]);
    expect(found.files.filter((file) => file.hasCredentials).map((file) => file.path)).toEqual([join(main, '.git', 'config'), included]);
  });

  it('a config that cannot be read, a broken one, or none at all is no error: nothing is found', async () => {
    expect(readGitCredentials({ cwd: base }, { env: env() }).secrets).toEqual([]);
    const broken = join(base, 'broken');
    await mkdir(join(broken, '.git'), { recursive: true });
    await writeFile(join(broken, '.git', 'config'), '[http "x\n\textraheader = = =\n[[[\n');
    expect(readGitCredentials({ cwd: broken }, { env: env() }).secrets).toEqual([]);
    await writeFile(join(broken, '.git', 'config'), `[remote "o"]\n\turl = https://u:${TOKEN}@h/r\n`);
    await chmod(join(broken, '.git', 'config'), 0o000);
    const unreadable = readGitCredentials({ cwd: broken }, { env: env() });
    // root reads a file of mode 000 all the same
    expect(unreadable.secrets.length === 0 || process.getuid?.() === 0).toBe(true);
    await writeFile(join(broken, '.git'), 'gitdir: nowhere\n').catch(() => undefined);
  });

  it("the signature changes when a config file read is written, so the sandbox's redacted view is made again", async () => {
    const repo = join(base, 'signed');
    git(base, 'init', '-q', repo);
    const found = readGitCredentials({ cwd: repo }, { env: env() });
    expect(signGitConfigFiles(found)).toBe(found.signature);
    git(repo, 'config', 'remote.origin.url', `https://u:${TOKEN}@h/r`);
    expect(signGitConfigFiles(found)).not.toBe(found.signature);
  });

  it('the redactor replaces each credential raw, JSON-escaped and in base64 at any alignment (`cat .git/config | base64`)', () => {
    const redact = genSecretRedactor({}, [{ name: 'git-config:x', value: TOKEN }]);
    for (const prefix of ['', 'a', 'ab', 'abc:'])
      expect(redact(Buffer.from(`${prefix}${TOKEN}\n`).toString('base64'))).toMatch(
        /^[A-Za-z0-9+/]{0,8}\[redacted:git-config:x\][A-Za-z0-9+/=]{0,8}$/,
      );
    expect(redact(Buffer.from(`xy${TOKEN}`).toString('base64url'))).toContain('[redacted:git-config:x]');
    expect(redact(`"token":"${TOKEN}"`)).toBe('"token":"[redacted:git-config:x]"');
  });
});

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { link, mkdir, mkdtemp, readdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLog } from '../core/contract/BrainContext.js';
import { genRulesGuard } from '../agent/permission/genRulesGuard.js';
import type { BhrainToolBox, BhrainToolContext } from '../agent/tool/BhrainToolBox.js';
import { genBashToolBox } from '../agent/toolboxes/bash/genBashToolBox.js';
import { genFilesToolBox } from '../agent/toolboxes/files/genFilesToolBox.js';
import { hasRipgrep } from '../agent/toolboxes/files/grepWithRipgrep.js';
import { DEFAULT_DENY_READ, resolveHiddenPaths } from './resolveHiddenPaths.js';

const hasRg = await hasRipgrep();

// the credential stores and $BHRAIN_HOME read as empty or absent to every tool the model drives

const SSH_KEY = 'FAKE-SSH-KEY-9f8e7d6c5b4a39281706';
const AWS_KEY = 'FAKE-AWS-KEY-1a2b3c4d5e6f7a8b9c0d';
const NPM_TOKEN = 'FAKE-NPM-TOKEN-0f1e2d3c4b5a69788796';
const STORE_SECRET = 'FAKE-RUN-RECORD-5566778899aabbccdd';
const OP_SECRET = 'FAKE-OP-SECRET-abcdefabcdef01234567';
const EVERY_SECRET = [SSH_KEY, AWS_KEY, NPM_TOKEN, STORE_SECRET, OP_SECRET];

let base: string;
let home: string;
let workspace: string;
let store: string;
let env: Record<string, string | undefined>;

/**
 * .what = a temp dir outside /tmp: the sandbox's /tmp is its own, so a store under the host's /tmp would read as absent
 *         whether or not it is hidden, and prove nothing
 */
const tmpdirOutsideTmp = (): string => (existsSync('/var/tmp') ? '/var/tmp' : homedir());

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdirOutsideTmp(), 'bhrain-hidden-')));
  home = join(base, 'home');
  workspace = join(base, 'ws');
  store = join(base, 'state');
  await mkdir(join(home, '.ssh'), { recursive: true });
  await mkdir(join(home, '.aws'), { recursive: true });
  await mkdir(join(home, '.config', 'op'), { recursive: true });
  await mkdir(join(store, 'runs', 'earlier'), { recursive: true });
  await mkdir(workspace);
  await writeFile(join(home, '.ssh', 'id_rsa'), `-----BEGIN OPENSSH PRIVATE KEY-----\n${SSH_KEY}\n`);
  await writeFile(join(home, '.ssh', 'config'), 'Host example\n  User git\n');
  await writeFile(join(home, '.aws', 'credentials'), `[default]\naws_secret_access_key = ${AWS_KEY}\n`);
  await writeFile(join(home, '.npmrc'), `//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n`);
  await writeFile(join(home, '.config', 'op', 'token'), OP_SECRET);
  await writeFile(join(home, 'notes.txt'), 'not a secret\n');
  await writeFile(join(store, 'runs', 'earlier', 'output.md'), STORE_SECRET);
  // what a hostile repository plants: links into the stores
  await symlink(join(home, '.ssh'), join(workspace, 'keys'));
  await symlink(join(home, '.aws', 'credentials'), join(workspace, 'aws'));
  await writeFile(join(workspace, 'readme.md'), 'hello\n');
  env = { ...process.env, HOME: home, BHRAIN_HOME: store };
});
afterAll(async () => rm(base, { recursive: true, force: true }));

const contextFor = (overrides: Partial<BhrainToolContext> = {}): BhrainToolContext => ({
  cwd: workspace,
  log: silentLog,
  env,
  ...overrides,
});

const call = async (box: BhrainToolBox, name: string, input: Record<string, unknown>, context = contextFor()) =>
  box.execute({ call: { id: 'c1', name, input } }, context);

/** .what = the secrets a text holds */
const secretsIn = (text: string): string[] => EVERY_SECRET.filter((secret) => text.includes(secret));

describe('the hidden paths, resolved per call', () => {
  it("the defaults are the credential stores, the shadow files and $BHRAIN_HOME, with ~ from the environment's HOME", () => {
    const hidden = resolveHiddenPaths({}, { env });
    expect(hidden.entries.map((entry) => entry.listed)).toEqual([...DEFAULT_DENY_READ, '$BHRAIN_HOME']);
    expect(hidden.entries.find((entry) => entry.listed === '~/.ssh')).toMatchObject({
      path: join(home, '.ssh'),
      realPath: join(home, '.ssh'),
      isDirectory: true,
    });
    expect(hidden.entries.find((entry) => entry.listed === '~/.kube')).toMatchObject({ realPath: null });
    expect(hidden.holding(join(home, '.ssh', 'id_rsa'))?.listed).toBe('~/.ssh');
    expect(hidden.holding(join(home, 'notes.txt'))).toBeNull();
    expect(hidden.holding(join(store, 'runs'))?.listed).toBe('$BHRAIN_HOME');
  });

  it('a read(<path>) handback unhides that path only: a directory above a store hands nothing back', () => {
    const exact = resolveHiddenPaths({ allowRead: ['~/.npmrc', '~/.ssh/config'] }, { env });
    expect(exact.holding(join(home, '.npmrc'))).toBeNull();
    expect(exact.holding(join(home, '.ssh', 'config'))).toBeNull();
    expect(exact.holding(join(home, '.ssh', 'id_rsa'))?.listed).toBe('~/.ssh');
    const above = resolveHiddenPaths({ allowRead: ['~', '/'] }, { env });
    expect(above.holding(join(home, '.npmrc'))?.listed).toBe('~/.npmrc');
  });

  it('a workspace inside a hidden directory stays readable, and a store inside that workspace stays hidden', () => {
    const inside = join(store, 'ws');
    const hidden = resolveHiddenPaths({ denyRead: [join(inside, 'secret')] }, { env, readable: [inside] });
    expect(hidden.holding(join(inside, 'a.txt'))).toBeNull();
    expect(hidden.holding(join(inside, 'secret', 'x'))?.listed).toBe(join(inside, 'secret'));
    expect(hidden.holding(join(store, 'runs'))?.listed).toBe('$BHRAIN_HOME');
  });

  it('a relative denyRead path is refused where the toolbox is built', () => {
    expect(() => genFilesToolBox({ denyRead: ['.env'] })).toThrow(
      "sandbox.denyRead '.env' is not an absolute path: give one that starts with / or ~/",
    );
    expect(() => genBashToolBox({ sandbox: { denyRead: ['secrets/'] } })).toThrow('is not an absolute path');
  });

  it('a read(<path>) allow rule with ~/ matches the expanded path and hands it back; a glob or a plain read hands nothing back', async () => {
    const guard = genRulesGuard(
      { allow: ['read(~/.npmrc)', 'read(~/.ssh/**)', 'read(~/.aws/*.pub)', 'read', 'bash(cat ~/.npmrc)'] },
      'rules',
      { home },
    );
    expect(guard.allowRead).toEqual([join(home, '.npmrc'), join(home, '.ssh')]);
    const decision = await guard.check({ call: { id: '1', name: 'read', input: { path: join(home, '.npmrc') } } }, { cwd: workspace });
    expect(decision.decision).toBe('allow');
  });
});

describe('the files tools refuse hidden paths, and walk past them', () => {
  const files = genFilesToolBox();

  it('read refuses a store however it is named: absolute, through a link in the workspace, through ../, a hard link', async () => {
    const named = [
      join(home, '.ssh', 'id_rsa'),
      'keys/id_rsa',
      'aws',
      '../home/.aws/credentials',
      join(home, '.npmrc'),
      join(store, 'runs', 'earlier', 'output.md'),
      '../home/.ssh/missing',
    ];
    for (const path of named) {
      const result = await call(files, 'read', { path });
      expect({ path, success: result.success, secrets: secretsIn(result.output) }).toEqual({ path, success: false, secrets: [] });
      expect(result.output).toMatch(/^Refused to read .*: it is in (~\/\.\w+ \(|\$BHRAIN_HOME)/);
    }
    expect((await call(files, 'read', { path: join(home, '.ssh', 'id_rsa') })).output).toContain(
      `Do the task without it; if it truly needs this file, tell the user, who can hand it back with a permission rule such as \`read(~/.ssh/id_rsa)\``,
    );
    // a hard link made before the run is the same file under another name
    await link(join(home, '.npmrc'), join(base, 'npmrc-link'));
    const linked = await call(files, 'read', { path: join(base, 'npmrc-link') });
    expect([linked.success, secretsIn(linked.output)]).toEqual([false, []]);
    await rm(join(base, 'npmrc-link'));
    // what is not hidden reads as before
    expect((await call(files, 'read', { path: join(home, 'notes.txt') })).output).toContain('not a secret');
  });

  /** grep, by one engine, over .., $HOME and the stores' parent */
  const grepFindsNoStore = async (engine: 'rg' | 'builtin') => {
    const grep = genFilesToolBox({ grepEngine: engine, denyRead: ['~/.config/op'] });
    for (const path of ['..', home, base, 'keys/', join(home, '.ssh')]) {
      const result = await call(grep, 'grep', { pattern: 'FAKE', path, include_ignored: true });
      expect({ path, secrets: secretsIn(result.output) }).toEqual({ path, secrets: [] });
    }
    expect((await call(grep, 'grep', { pattern: 'FAKE', path: join(home, '.ssh') })).output).toMatch(/^Refused to search /);
    expect((await call(grep, 'grep', { pattern: 'not a secret', path: '..', include_ignored: true })).output).toContain(
      'home/notes.txt:1:not a secret',
    );
  };
  it("grep (builtin) over .., $HOME and the stores' parent finds none of their content, and refuses a store as its path", () =>
    grepFindsNoStore('builtin'));
  // skipped, saying so in its name, where ripgrep is not installed (as .ci/run promises of the rg tests)
  it.skipIf(!hasRg)(
    "grep (rg; skipped without ripgrep on PATH) over .., $HOME and the stores' parent finds none of their content, and refuses a store as its path",
    () => grepFindsNoStore('rg'),
  );

  it('glob over .., $HOME and a pattern from / lists nothing inside a store, nor a hidden file', async () => {
    const glob = genFilesToolBox({ denyRead: ['~/.config/op'] });
    for (const input of [
      { pattern: '**/*', path: '..', include_ignored: true },
      { pattern: '**/*', path: home, include_ignored: true },
      { pattern: `*/${base.split('/').slice(2).join('/')}/**`, path: '/', include_ignored: true },
    ]) {
      const result = await call(glob, 'glob', input);
      expect(result.output).toContain('notes.txt');
      expect({ input, listed: result.output.split('\n').filter((line) => /\/(\.ssh|\.aws|state)\/|\.npmrc$|\/op\//.test(line)) }).toEqual({
        input,
        listed: [],
      });
    }
    expect((await call(files, 'glob', { pattern: '*', path: join(home, '.aws') })).output).toMatch(/^Refused to search /);
    expect((await call(files, 'glob', { pattern: `${home}/.ssh/*` })).output).toMatch(/^Refused to search /);
  });

  it('write and edit refuse a store, even through a link in the workspace', async () => {
    for (const [name, input] of [
      ['write', { path: 'keys/authorized_keys', content: 'ssh-ed25519 AAAA attacker' }],
      ['edit', { path: 'aws', old_string: 'aws', new_string: 'x' }],
    ] as const) {
      const result = await call(files, name, input, {
        ...contextFor(),
        writeCheck: { realPath: join(home, '.ssh', 'authorized_keys'), approved: true },
      } as BhrainToolContext);
      expect(result.output).toMatch(new RegExp(`^Refused to ${name} `));
    }
    expect(existsSync(join(home, '.ssh', 'authorized_keys'))).toBe(false);
  });

  it("denyRead hides more, allowRead hands a path back, and the session's spill dir in $BHRAIN_HOME stays readable", async () => {
    const denied = genFilesToolBox({ denyRead: ['~/.config/op'] });
    expect((await call(denied, 'read', { path: join(home, '.config', 'op', 'token') })).output).toMatch(
      /^Refused to read .* it is in ~\/\.config\/op/,
    );
    const handedBack = genFilesToolBox({ allowRead: ['~/.npmrc'] });
    expect((await call(handedBack, 'read', { path: join(home, '.npmrc') })).output).toContain(NPM_TOKEN);
    expect((await call(handedBack, 'read', { path: join(home, '.ssh', 'id_rsa') })).success).toBe(false);
    const spillDir = join(store, 'runs', 'now', 'spill');
    await mkdir(spillDir, { recursive: true });
    await writeFile(join(spillDir, 'bash-1.txt'), 'the full output\n');
    expect((await call(files, 'read', { path: join(spillDir, 'bash-1.txt') }, contextFor({ spillDir }))).output).toContain(
      'the full output',
    );
    expect((await call(files, 'read', { path: join(store, 'runs', 'earlier', 'output.md') }, contextFor({ spillDir }))).success).toBe(
      false,
    );
  });
});

describe('bash in the sandbox finds the stores empty or absent', () => {
  const bash = genBashToolBox({ sandbox: { denyRead: ['~/.config/op'] } });
  const run = async (command: string, box = bash, context = contextFor()) => (await call(box, 'bash', { command }, context)).output;

  it('cat, tar, cp and a link in the workspace read nothing of a store, and copy nothing of one into the workspace', async () => {
    const printed = await run(
      [
        'cat ~/.ssh/id_rsa ~/.aws/credentials ~/.npmrc ~/.config/op/token "$BHRAIN_HOME"/runs/earlier/output.md keys/id_rsa aws',
        'ls -A ~/.ssh ~/.aws "$BHRAIN_HOME"; wc -c < ~/.npmrc',
        'tar cf stores.tar -C ~ .ssh .aws .npmrc .config/op; cp -rL keys copied; cp ~/.npmrc npmrc.copy; cp -r "$BHRAIN_HOME" store.copy',
        'touch ~/.ssh/planted; echo x >> ~/.npmrc',
      ].join('\n'),
    );
    expect(secretsIn(printed)).toEqual([]);
    expect(printed).toMatch(/^0$/m);
    expect(printed).toMatch(/touch: cannot touch '.*\/\.ssh\/planted': Read-only file system/);
    const copies = execFileSync('bash', ['-c', 'cat stores.tar npmrc.copy; cat copied/* store.copy/* 2>/dev/null; true'], {
      cwd: workspace,
      encoding: 'latin1',
    });
    expect(secretsIn(copies)).toEqual([]);
    expect(existsSync(join(home, '.ssh', 'planted'))).toBe(false);
    await rm(join(workspace, 'stores.tar'), { force: true });
    for (const copy of ['copied', 'npmrc.copy', 'store.copy']) await rm(join(workspace, copy), { recursive: true, force: true });
  });

  it('what exists is hidden and nothing is created on the host: no mount point for a store that is not there', async () => {
    await run('true');
    for (const absent of ['.kube', '.azure', '.gnupg', '.docker', '.netrc', '.git-credentials'])
      expect(existsSync(join(home, absent))).toBe(false);
    expect((await readdir(home)).sort()).toEqual(['.aws', '.config', '.npmrc', '.ssh', 'notes.txt']);
  });

  it('a path handed back reads in the sandbox; a workspace inside a hidden directory stays the workspace', async () => {
    const handedBack = genBashToolBox({ sandbox: { allowRead: ['~/.npmrc', '~/.ssh/config'] } });
    const printed = await run('cat ~/.npmrc ~/.ssh/config; cat ~/.ssh/id_rsa', handedBack);
    expect(printed).toContain(NPM_TOKEN);
    expect(printed).toContain('Host example');
    expect(printed).not.toContain(SSH_KEY);
    const inside = join(store, 'project');
    await mkdir(inside, { recursive: true });
    await writeFile(join(inside, 'file.txt'), 'mine\n');
    // by its path: $BHRAIN_HOME is not among the variables commands get
    const there = await run(`cat file.txt; echo made > made.txt; ls ${store}`, bash, contextFor({ cwd: inside }));
    expect(there).toContain('mine');
    expect(there).not.toContain('runs');
    expect(existsSync(join(inside, 'made.txt'))).toBe(true);
  });
});

// issue 18: a bash call's sandbox is started when the previous call ends, while the model answers, so its start is not
// on the next call's path; each call still gets a sandbox of its own, made for exactly what the call runs with
import { mkdir, mkdtemp, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PACKAGE_ROOT, runProcess } from '../../../../../test/acceptance/runCli.js';
import { silentLog } from '../../../../contract/BrainContext.js';
import type { BhrainToolBox } from '../BhrainToolBox.js';
import { checkBashSandbox } from './checkBashSandbox.js';
import { genBashToolBox } from './genBashToolBox.js';
import { genBwrapArgs } from './genBwrapArgs.js';
import { genWaitingSandboxes, startSandbox } from './WaitingSandbox.js';

let root: string;
beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'bhrain-waiting-')));
});
afterAll(async () => rm(root, { recursive: true, force: true }));

/** .what = a fresh workspace under root, named so its sandboxes can be found by their command lines */
const genWorkspace = async (name: string): Promise<string> => {
  const workspace = join(root, `${name}-${Math.random().toString(36).slice(2)}`);
  await mkdir(workspace);
  return workspace;
};

/**
 * .what = the living bwrap processes waiting for a command in a workspace (bwrap's --chdir names it), from /proc: the
 *         outer bwrap of each sandbox (its pid 1 inside is a bwrap with the same command line, its child)
 */
const waitingIn = async (workspace: string): Promise<number[]> => {
  const found = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const args = (await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).split('\0');
    const procStat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const [state, parent] = procStat.slice(procStat.lastIndexOf(')') + 2).split(' ');
    if (procStat && state !== 'Z' && args[0]?.endsWith('bwrap') && args.includes(workspace) && args.some((arg) => arg.startsWith('IFS= read')))
      found.set(Number(entry), Number(parent));
  }
  return [...found].filter(([, parent]) => !found.has(parent)).map(([pid]) => pid);
};

/** .what = polls until a workspace has a waiting sandbox (it starts on the tick after a call), or fails after 5 s */
const awaitWaitingIn = async (workspace: string): Promise<number[]> => {
  for (const deadline = Date.now() + 5_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 20))) {
    const found = await waitingIn(workspace);
    if (found.length > 0) return found;
  }
  throw new Error(`no sandbox waiting in ${workspace} 5 s after a call`);
};

/** .what = polls until a workspace has no waiting sandbox (one killed with its parent dies a moment after it), or 5 s pass */
const awaitNoneWaitingIn = async (workspace: string): Promise<number[]> => {
  let found = await waitingIn(workspace);
  for (const deadline = Date.now() + 5_000; found.length > 0 && Date.now() < deadline; found = await waitingIn(workspace))
    await new Promise((resolve) => setTimeout(resolve, 20));
  return found;
};

const runBash = (box: BhrainToolBox, workspace: string, command: string) =>
  box.execute({ call: { id: 'call-1', name: 'bash', input: { command } } }, { cwd: workspace, log: silentLog, env: { ...process.env } });

describe('issue 18 = the next bash call finds its sandbox started', () => {
  it('given a call that ended, then a sandbox waits for the next call, which runs in it and leaves the next one waiting', async () => {
    const workspace = await genWorkspace('next');
    const box = genBashToolBox();
    expect((await runBash(box, workspace, 'true')).success).toBe(true);
    const [first] = await awaitWaitingIn(workspace);
    const result = await runBash(box, workspace, 'printf "%s\\n" "$0" "$-"; cat; echo read-nothing');
    // the command runs as `bash -c` always did: $0 is bash, no -i, stdin at end of file
    expect(result.output).toMatch(/^exit code: 0\n--- stdout ---\n\/\S*bash\nhBc\nread-nothing$/);
    const [second] = await awaitWaitingIn(workspace);
    expect(second).not.toBe(first);
    expect(await waitingIn(workspace)).toEqual([second]);
  });

  it('then a command keeps its quoting, newlines and a heredoc through the handoff', async () => {
    const workspace = await genWorkspace('text');
    const box = genBashToolBox();
    await runBash(box, workspace, 'true');
    await awaitWaitingIn(workspace);
    const result = await runBash(box, workspace, "cat <<'EOF'\n  $HOME 'é' \"\\n\"\n\nEOF\nprintf '[%s]' \"$(printf 'a\\n\\n')\"\n");
    expect(result.output).toBe("exit code: 0\n--- stdout ---\n  $HOME 'é' \"\\n\"\n\n[a]");
  });

  it("then the handoff sources no file the command's bash would not: a bash on a socket reads ~/.bashrc, as if sshd ran it", async () => {
    const workspace = await genWorkspace('rc');
    await writeFile(join(workspace, '.bashrc'), 'echo sourced-bashrc\n');
    const box = genBashToolBox();
    // no SHLVL, as in a clean environment: a top-level bash
    const context = { cwd: workspace, log: silentLog, env: { PATH: process.env.PATH, HOME: workspace } };
    const outputs: string[] = [];
    for (const command of ['echo first', 'echo second']) outputs.push((await box.execute({ call: { id: 'call-1', name: 'bash', input: { command } } }, context)).output);
    expect(outputs).toEqual(['exit code: 0\n--- stdout ---\nfirst', 'exit code: 0\n--- stdout ---\nsecond']);
  });

  it('then a command of 100 KB runs; one above 128 KB (a single argument of bash -c) or with a NUL is refused, saying why', async () => {
    const workspace = await genWorkspace('long');
    const box = genBashToolBox();
    const long = await runBash(box, workspace, `: ${'a'.repeat(100 * 1024)}; echo ran`);
    expect(long.output).toBe('exit code: 0\n--- stdout ---\nran');
    const tooLong = await runBash(box, workspace, `: ${'a'.repeat(128 * 1024)}`);
    expect(tooLong).toMatchObject({ success: false, output: expect.stringMatching(/^`command` is 131074 bytes, and bash -c takes at most 131071 \(Linux's limit on one argument\): write the script to a file first/) });
    expect(await runBash(box, workspace, 'echo a\0; echo b')).toMatchObject({ success: false, output: '`command` must not contain a NUL character: bash cannot take one' });
  });

  describe('given a hostile model that changes what the waiting sandbox binds, between two calls, from outside it', () => {
    // the write and edit tools run outside the sandbox, between bash calls: a sandbox started before them binds the
    // paths as they were, so it must not serve a call once they changed; each attack is judged by its effect on disk
    it('then a .git/config replaced by a rename, or a .git/hooks made, since the sandbox started is still read-only', async () => {
      let attempts = 0;
      let escapes = 0;

      const renamed = await genWorkspace('renamed');
      await mkdir(join(renamed, '.git'));
      await writeFile(join(renamed, '.git', 'config'), '[core]\n');
      const box = genBashToolBox();
      await runBash(box, renamed, 'true');
      await awaitWaitingIn(renamed);
      // a new inode at the same path: the waiting sandbox's read-only bind covers the old one
      await writeFile(join(renamed, '.git', 'config.new'), '[core]\n\tbare = false\n');
      await rename(join(renamed, '.git', 'config.new'), join(renamed, '.git', 'config'));
      attempts++;
      await runBash(box, renamed, "printf '\\thooksPath = /tmp/planted\\n' >> .git/config");
      if ((await readFile(join(renamed, '.git', 'config'), 'utf8')).includes('planted')) escapes++;

      const made = await genWorkspace('made');
      await mkdir(join(made, '.git'));
      await runBash(box, made, 'true');
      await awaitWaitingIn(made);
      await mkdir(join(made, '.git', 'hooks'));
      attempts++;
      await runBash(box, made, 'echo planted > .git/hooks/pre-commit');
      if (await readFile(join(made, '.git', 'hooks', 'pre-commit'), 'utf8').catch(() => null)) escapes++;

      expect({ attempts, escapes }).toEqual({ attempts: 2, escapes: 0 });
    });
  });

  it('then a waiting sandbox is killed once it has waited idleMs', async () => {
    const check = await checkBashSandbox({ env: process.env });
    if (!check.ok) throw new Error(check.reason);
    const workspace = await genWorkspace('idle');
    const waiting = genWaitingSandboxes({ idleMs: 1_000 });
    const bwrapArgs = genBwrapArgs({ bashPath: check.bashPath, mode: 'read-only', allowNetwork: false, cwd: workspace, cwdReal: workspace, gitPaths: [] });
    waiting.prepare('key', () => startSandbox({ bwrapPath: check.bwrapPath, bwrapArgs }, { cwd: workspace, env: process.env }));
    expect(await awaitWaitingIn(workspace)).toHaveLength(1);
    expect(await awaitNoneWaitingIn(workspace)).toEqual([]);
    expect(waiting.take('key')).toBeNull();
  });

  it('then a waiting sandbox neither keeps its process running nor outlives it', async () => {
    const workspace = await genWorkspace('exit');
    const source = `import { genBashToolBox } from ${JSON.stringify(join(PACKAGE_ROOT, 'dist', 'index.js'))};
      const result = await genBashToolBox().execute({ call: { id: 'c', name: 'bash', input: { command: 'echo ran' } } }, { cwd: ${JSON.stringify(workspace)}, log: { debug() {}, info() {}, warn() {}, error() {} }, env: process.env });
      await new Promise((resolve) => setTimeout(resolve, 300));
      console.log(result.output);`;
    const startedAt = Date.now();
    const run = await runProcess({ command: process.execPath, args: ['--input-type=module', '-e', source], cwd: workspace, env: { PATH: process.env.PATH, HOME: workspace } });
    expect(run.stdout).toBe('exit code: 0\n--- stdout ---\nran\n');
    // a sandbox that held it open would keep it for its 60 s of waiting
    expect(Date.now() - startedAt).toBeLessThan(20_000);
    expect(await awaitNoneWaitingIn(workspace)).toEqual([]);
  });
});

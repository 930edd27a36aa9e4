// bash's sandbox is kept between calls, so a call pays a fork and exec of bash, not bubblewrap's start and a
// fork of bhrain; what a fresh sandbox per call promised (nothing outlives its call, the end of a call cannot be faked)
// is kept by the sandbox's supervisor, its pid 1
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PACKAGE_ROOT, runProcess } from '../../test/acceptance/runCli.js';
import { silentLog } from '../core/contract/BrainContext.js';
import type { BhrainToolBox } from '../agent/tool/BhrainToolBox.js';
import { checkBashSandbox } from './checkBashSandbox.js';
import { genBashSandboxPool } from './genBashSandboxPool.js';
import { genBashToolBox } from '../agent/toolboxes/bash/genBashToolBox.js';
import { genBwrapArgs } from './genBwrapArgs.js';
import { seccompFilterOfThisMachine } from './genSeccompFilter.js';
import { tempDir } from '#test-helpers/fs.js';

let root: string;
beforeAll(async () => {
  root = tempDir('bhrain-pool-');
});
afterAll(async () => rm(root, { recursive: true, force: true }));

/** .what = a fresh workspace under root, named so its sandboxes can be found by their command lines */
const genWorkspace = async (name: string): Promise<string> => {
  const workspace = join(root, `${name}-${Math.random().toString(36).slice(2)}`);
  await mkdir(workspace);
  return workspace;
};

/** .what = the living bwrap processes of sandboxes in a workspace (bwrap's --chdir names it), from the host's /proc */
const sandboxesIn = async (workspace: string): Promise<number[]> => {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const args = (await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).split('\0');
    const procStat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (procStat && procStat[procStat.lastIndexOf(')') + 2] !== 'Z' && args[0]?.endsWith('bwrap') && args.includes(workspace))
      found.push(Number(entry));
  }
  return found;
};

/** .what = polls until a workspace has no sandbox left (one killed dies a moment after), or 5 s pass */
const awaitNoneIn = async (workspace: string): Promise<number[]> => {
  let found = await sandboxesIn(workspace);
  for (const deadline = Date.now() + 5_000; found.length > 0 && Date.now() < deadline; found = await sandboxesIn(workspace))
    await new Promise((resolve) => setTimeout(resolve, 20));
  return found;
};

const runBash = (box: BhrainToolBox, workspace: string, command: string, timeoutMs?: number) =>
  box.execute(
    { call: { id: 'call-1', name: 'bash', input: { command, ...(timeoutMs ? { timeout_ms: timeoutMs } : {}) } } },
    { cwd: workspace, log: silentLog, env: { ...process.env } },
  );

describe('bash calls run in a sandbox kept between them', () => {
  it('given calls in a row, then they run in one sandbox, each as `bash -c` always did: $0 bash, no -i, stdin at end of file', async () => {
    const workspace = await genWorkspace('row');
    const box = genBashToolBox();
    const results = [];
    for (let index = 0; index < 3; index++)
      results.push((await runBash(box, workspace, 'printf "%s\\n" "$0" "$-"; cat; echo read-nothing')).output);
    expect(new Set(results).size).toBe(1);
    expect(results[0]).toMatch(/^exit code: 0\n--- stdout ---\n\/\S*bash\nhBc\nread-nothing$/);
    expect(await sandboxesIn(workspace)).toHaveLength(1);
  });

  it('then each runs through `eval` in a bash started before its call (as Claude Code runs its commands): its text is on no command line, and its shell holds stdin, stdout and stderr only', async () => {
    const workspace = await genWorkspace('reader');
    const box = genBashToolBox();
    // `bash -c <command>` had the text on its command line, so pkill -f with it killed the command's own shell; pkill is
    // tried until it finds the sleep, since the background child may not have exec'd it yet when pkill first looks
    expect((await runBash(box, workspace, 'sleep 30 & until pkill -f "sleep 30"; do sleep 0.05; done; wait; echo survived')).output).toBe(
      'exit code: 0\n--- stdout ---\nsurvived',
    );
    // not the sandbox's stdin (a socket), where the call's nonce waits, nor the supervisor's socket for the commands'
    // stderr, nor what bhrain inherited (this test's runner may leave fds open); a file as a redirection (a pipeline
    // would show bash's own pipe)
    const fds = (
      await runBash(box, workspace, 'ls -l /proc/$$/fd > /tmp/fds; sed -n "s/.* \\([0-9]*\\) -> \\([^:]*\\).*/\\1 \\2/p" /tmp/fds')
    ).output;
    expect(fds).toBe('exit code: 0\n--- stdout ---\n0 /dev/null\n1 socket\n2 socket');
    // the lines of its errors are its own; a syntax error says `eval` where `bash -c` said `-c`
    expect((await runBash(box, workspace, 'echo a\nnot-a-command\nfi')).output).toBe(
      "exit code: 2\n--- stdout ---\na\n--- stderr ---\n/usr/bin/bash: line 2: not-a-command: command not found\n/usr/bin/bash: eval: line 3: syntax error near unexpected token `fi'\n/usr/bin/bash: eval: line 3: `fi'",
    );
  });

  it('then a command keeps its quoting, newlines and a heredoc on its way to the sandbox', async () => {
    const workspace = await genWorkspace('text');
    const result = await runBash(
      genBashToolBox(),
      workspace,
      "cat <<'EOF'\n  $HOME 'é' \"\\n\"\n\nEOF\nprintf '[%s]' \"$(printf 'a\\n\\n')\"\n",
    );
    expect(result.output).toBe('exit code: 0\n--- stdout ---\n  $HOME \'é\' "\\n"\n\n[a]');
  });

  it("then the sandbox sources no file the command's bash would not: a bash on a socket reads ~/.bashrc, as if sshd ran it", async () => {
    const workspace = await genWorkspace('rc');
    await writeFile(join(workspace, '.bashrc'), 'echo sourced-bashrc\n');
    const box = genBashToolBox();
    // no SHLVL, as in a clean environment: a top-level bash
    const context = { cwd: workspace, log: silentLog, env: { PATH: process.env.PATH, HOME: workspace } };
    const outputs: string[] = [];
    for (const command of ['echo first', 'echo second'])
      outputs.push((await box.execute({ call: { id: 'call-1', name: 'bash', input: { command } } }, context)).output);
    expect(outputs).toEqual(['exit code: 0\n--- stdout ---\nfirst', 'exit code: 0\n--- stdout ---\nsecond']);
  });

  it('then shell options, a read timeout or functions under the names the supervisor uses, passed to the commands by name, change nothing it does', async () => {
    const workspace = await genWorkspace('env');
    const context = {
      cwd: workspace,
      log: silentLog,
      env: {
        ...process.env,
        SHELLOPTS: 'errexit:noglob:nounset:xtrace',
        TMOUT: '1',
        'BASH_FUNC_kill%%': '() { echo fake-kill; }',
        'BASH_FUNC_printf%%': '() { echo fake-printf; }',
      },
    };
    // not in the table of what commands get: they reach them only passed by name
    const box = genBashToolBox({ sandbox: { env: { pass: ['SHELLOPTS', 'TMOUT', 'BASH_FUNC_kill%%', 'BASH_FUNC_printf%%'] } } });
    const run = (command: string) => box.execute({ call: { id: 'call-1', name: 'bash', input: { command } } }, context);
    // xtrace and noglob reach the command, and kill and printf are its functions. The background job traces itself in
    // its own process, which the supervisor kills as soon as the command's shell ends: its line may not be written
    const traced = (await run('echo *; kill; printf x; sleep 777001 &')).output.replace(/\n\+ sleep 777001$/, '');
    expect(traced).toBe(
      "exit code: 0\n--- stdout ---\n*\nfake-kill\nfake-printf\n--- stderr ---\n+ echo '*'\n+ kill\n+ echo fake-kill\n+ printf x\n+ echo fake-printf",
    );
    // longer than TMOUT: the sandbox still waits for the next call
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await run('pgrep -c -x sleep || true')).output).toMatch(/^exit code: 0\n--- stdout ---\n0\n/);
    expect(await sandboxesIn(workspace)).toHaveLength(1);
    // unpassed, none of them reaches the command
    const unpassed = await genBashToolBox().execute(
      { call: { id: 'call-2', name: 'bash', input: { command: 'echo *; kill; printf x' } } },
      context,
    );
    expect(unpassed.output).toMatch(/^exit code: 0\n--- stdout ---\n\*\nx\n--- stderr ---\n.*kill: usage/);
  });

  it('then a command of 100 KB runs; one above 128 KB (a single argument of bash -c) or with a NUL is refused, saying why', async () => {
    const workspace = await genWorkspace('long');
    const box = genBashToolBox();
    const long = await runBash(box, workspace, `: ${'a'.repeat(100 * 1024)}; echo ran`);
    expect(long.output).toBe('exit code: 0\n--- stdout ---\nran');
    const tooLong = await runBash(box, workspace, `: ${'a'.repeat(128 * 1024)}`);
    expect(tooLong).toMatchObject({
      success: false,
      output: expect.stringMatching(
        /^the arguments of bash do not fit its schema: input\.command is 131074 bytes, and bash -c takes at most 131071 \(Linux's limit on one argument\): write the script to a file first/,
      ),
    });
    expect(await runBash(box, workspace, 'echo a\0; echo b')).toMatchObject({
      success: false,
      output:
        'the arguments of bash do not fit its schema: input.command must not contain a NUL character: bash cannot take one. Call bash again with corrected arguments',
    });
  });

  it("then output that ends without a newline, is empty, or looks like the end of a call comes back whole, and the exit code is the command's", async () => {
    const workspace = await genWorkspace('ends');
    const box = genBashToolBox();
    expect((await runBash(box, workspace, 'printf 042; printf 0123456789abcdef0123456789abcdef >&2; exit 42')).output).toBe(
      'exit code: 42\n--- stdout ---\n042\n--- stderr ---\n0123456789abcdef0123456789abcdef',
    );
    expect((await runBash(box, workspace, 'true')).output).toBe('exit code: 0\n(no output)');
    expect((await runBash(box, workspace, 'kill -TERM $$')).output).toBe('killed by signal SIGTERM\n(no output)');
  });

  it('then signals a command sends the supervisor (pid 1) change nothing: the next call runs in the same sandbox', async () => {
    const workspace = await genWorkspace('signals');
    const box = genBashToolBox();
    const pidNamespace = 'readlink /proc/self/ns/pid';
    const before = (await runBash(box, workspace, pidNamespace)).output;
    // SIGUSR1 is the one it traps: it ends the call that sent it, as a timeout would
    await runBash(box, workspace, 'kill -KILL 1; kill -STOP 1; kill -TERM 1; kill -HUP 1; kill -USR1 1; sleep 1');
    expect((await runBash(box, workspace, pidNamespace)).output).toBe(before);
    expect(await sandboxesIn(workspace)).toHaveLength(1);
  });
});

describe('bash calls run in a sandbox kept between them', () => {
  describe('given calls at the same time', () => {
    it('then each runs in a sandbox of its own, and afterwards at most maxIdle sandboxes wait', async () => {
      const workspace = await genWorkspace('concurrent');
      const check = await checkBashSandbox({ env: process.env });
      if (!check.ok) throw new Error(check.reason);
      const start = {
        ...check,
        bwrapArgs: genBwrapArgs({
          bashPath: check.bashPath,
          mode: 'read-only',
          allowNetwork: false,
          cwd: workspace,
          roots: [workspace],
          protectedPaths: [],
          shellVariables: [],
        }),
        seccompFilter: seccompFilterOfThisMachine(false)!,
      };
      const pool = genBashSandboxPool({ idleMs: 60_000, maxIdle: 2 });
      const call = () =>
        pool.run(
          {
            key: 'same',
            start,
            command: 'sleep 0.3; readlink /proc/self/ns/pid',
            timeoutMs: 5_000,
            maxCaptureBytes: 1_000,
            killGraceMs: 500,
          },
          { cwd: workspace, env: process.env },
        );
      const runs = await Promise.all([call(), call(), call()]);
      // each in a pid namespace of its own
      expect(new Set(runs.map((run) => run.stdout.head)).size).toBe(3);
      expect(await awaitCount(workspace, 2)).toHaveLength(2);
    });
  });

  describe('given a hostile model that changes what the sandbox binds, between two calls, from outside it', () => {
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
      // a new inode at the same path: the kept sandbox's read-only bind covers the old one
      await writeFile(join(renamed, '.git', 'config.new'), '[core]\n\tbare = false\n');
      await rename(join(renamed, '.git', 'config.new'), join(renamed, '.git', 'config'));
      attempts++;
      await runBash(box, renamed, "printf '\\thooksPath = /tmp/planted\\n' >> .git/config");
      if ((await readFile(join(renamed, '.git', 'config'), 'utf8')).includes('planted')) escapes++;

      const made = await genWorkspace('made');
      await mkdir(join(made, '.git'));
      await runBash(box, made, 'true');
      // the sandbox's placeholder for the hooks it protects is there already, as a mkdir -p by git would find it
      await mkdir(join(made, '.git', 'hooks'), { recursive: true });
      attempts++;
      await runBash(box, made, 'echo planted > .git/hooks/pre-commit');
      if (await readFile(join(made, '.git', 'hooks', 'pre-commit'), 'utf8').catch(() => null)) escapes++;

      expect({ attempts, escapes }).toEqual({ attempts: 2, escapes: 0 });
    });
  });

  describe('given a command that breaks the way its call ends', () => {
    it('then one that shuts its stdout socket down ends its call, saying so, and the next call runs in a new sandbox', async () => {
      const workspace = await genWorkspace('shutdown');
      const box = genBashToolBox();
      await runBash(box, workspace, 'true');
      const [first] = await sandboxesIn(workspace);
      const broken = await runBash(
        box,
        workspace,
        `echo before; python3 -c 'import socket; socket.socket(fileno=1).shutdown(socket.SHUT_WR)'; sleep 5`,
      );
      expect(broken.output).toMatch(
        /^the sandbox ended while the command ran \(bwrap (exit|killed by)[^)]*\): .*; the exit code is unknown\n--- stdout ---\nbefore$/,
      );
      expect((await runBash(box, workspace, 'echo after')).output).toBe('exit code: 0\n--- stdout ---\nafter');
      expect(await sandboxesIn(workspace)).not.toContain(first);
    });

    it('then a timeout ends the command with SIGTERM, and one that ignores it with its sandbox, after the grace', async () => {
      const workspace = await genWorkspace('timeout');
      const box = genBashToolBox({ killGraceMs: 300 });
      await runBash(box, workspace, 'true');
      const [kept] = await sandboxesIn(workspace);
      expect((await runBash(box, workspace, 'echo going; sleep 30', 200)).output).toBe(
        'timed out after 200 ms; the process group was killed\n--- stdout ---\ngoing',
      );
      // SIGTERM was enough: the sandbox serves the next call
      expect(await sandboxesIn(workspace)).toEqual([kept]);
      expect((await runBash(box, workspace, "trap '' TERM; sleep 30", 200)).output).toBe(
        'timed out after 200 ms; the process group was killed\n(no output)',
      );
      expect(await awaitNoneIn(workspace)).toEqual([]);
      expect((await runBash(box, workspace, 'echo after')).output).toBe('exit code: 0\n--- stdout ---\nafter');
    });
  });
});

describe('bash calls run in a sandbox kept between them', () => {
  it('then a sandbox is killed once it has waited idleMs', async () => {
    const check = await checkBashSandbox({ env: process.env });
    if (!check.ok) throw new Error(check.reason);
    const workspace = await genWorkspace('idle');
    const start = {
      ...check,
      bwrapArgs: genBwrapArgs({
        bashPath: check.bashPath,
        mode: 'read-only',
        allowNetwork: false,
        cwd: workspace,
        roots: [workspace],
        protectedPaths: [],
        shellVariables: [],
      }),
      seccompFilter: seccompFilterOfThisMachine(false)!,
    };
    const run = await genBashSandboxPool({ idleMs: 1_000, maxIdle: 1 }).run(
      { key: 'idle', start, command: 'true', timeoutMs: 5_000, maxCaptureBytes: 1_000, killGraceMs: 500 },
      { cwd: workspace, env: process.env },
    );
    expect(run.exitCode).toBe(0);
    expect(await sandboxesIn(workspace)).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await awaitNoneIn(workspace)).toEqual([]);
  });

  it("then a waiting sandbox (or the probe's, discarded) neither keeps its process running nor outlives it", async () => {
    const workspace = await genWorkspace('exit');
    const source = `import { genBashToolBox } from ${JSON.stringify(join(PACKAGE_ROOT, 'dist', 'index.js'))};
      const result = await genBashToolBox().execute({ call: { id: 'c', name: 'bash', input: { command: 'echo ran' } } }, { cwd: ${JSON.stringify(workspace)}, log: { debug() {}, info() {}, warn() {}, error() {} }, env: process.env });
      console.log(result.output);
      console.log(Date.now());`;
    const run = await runProcess({
      command: process.execPath,
      args: ['--input-type=module', '-e', source],
      cwd: workspace,
      env: { PATH: process.env.PATH, HOME: workspace },
    });
    const exitedAt = Date.now();
    expect(run.stdout).toMatch(/^exit code: 0\n--- stdout ---\nran\n\d+\n$/);
    // nothing of the sandboxes holds the process once its work is done: not the 60 s a kept one waits, nor a timer
    expect(exitedAt - Number(run.stdout.trim().split('\n').at(-1))).toBeLessThan(1_000);
    expect(await awaitNoneIn(workspace)).toEqual([]);
  });
});

/** .what = polls until a workspace has exactly `count` sandboxes (a discarded one dies a moment after), or 5 s pass */
const awaitCount = async (workspace: string, count: number): Promise<number[]> => {
  let found = await sandboxesIn(workspace);
  for (const deadline = Date.now() + 5_000; found.length !== count && Date.now() < deadline; found = await sandboxesIn(workspace))
    await new Promise((resolve) => setTimeout(resolve, 20));
  return found;
};

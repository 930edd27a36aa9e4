import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLog } from '../core/contract/BrainContext.js';
import { BadRequestError } from '../core/contract/errors.js';
import { configureBhrain } from '../agent/config/configureBhrain.js';
import type { BhrainToolBox, BhrainToolContext } from '../agent/tool/BhrainToolBox.js';
import { checkBashSandbox } from './checkBashSandbox.js';
import { genBashSandboxPool } from './genBashSandboxPool.js';
import { genBashToolBox } from '../agent/toolboxes/bash/genBashToolBox.js';
import { exists, tempDir } from '#test-helpers/fs.js';
import { findLivingProcesses, uniqueSeconds } from '#test-helpers/process.js';

// bash runs in an OS sandbox (bubblewrap), on by default, and fails closed when it cannot start

let root: string;
let workspace: string;
let outside: string;
beforeAll(async () => {
  root = tempDir('bhrain-sandbox-');
  workspace = join(root, 'workspace');
  outside = join(root, 'outside');
  await mkdir(workspace);
  await mkdir(outside);
});
afterAll(async () => rm(root, { recursive: true, force: true }));

const contextFor = (overrides: Partial<BhrainToolContext> = {}): BhrainToolContext => ({
  cwd: workspace,
  log: silentLog,
  env: { ...process.env },
  ...overrides,
});

const runBash = async (box: BhrainToolBox, command: string, context: BhrainToolContext = contextFor()) => {
  const startedAt = Date.now();
  const result = await box.execute({ call: { id: 'call-1', name: 'bash', input: { command } } }, context);
  return { ...result, elapsedMs: Date.now() - startedAt };
};

// the toolbox (default sandbox, a short grace) the cases share
const box = genBashToolBox({ killGraceMs: 500 });

describe('bash runs in a bubblewrap sandbox, on by default', () => {
  describe('given the default mode, workspace-write', () => {
    it('then writes outside the working directory fail: a sibling directory, /etc, $HOME', async () => {
      const home = homedir();
      const marker = `bhrain-sandbox-${process.pid}-${Date.now()}`;
      const result = await runBash(
        box,
        [`echo x > ../outside/f`, `echo x > /etc/${marker}`, `echo x > "$HOME/${marker}"`, 'echo done'].join('; '),
      );
      // the sibling lives under the host's /tmp, which the private /tmp hides: it is not even there
      expect(result.output).toMatch(/outside\/f: (Read-only file system|No such file or directory)/);
      expect(result.output).toMatch(new RegExp(`/etc/${marker}: Read-only file system`));
      expect(result.output).toContain(`${home}/${marker}: Read-only file system`);
      expect(result.output).toMatch(/--- stdout ---\ndone\n/);
      expect(await exists(join(outside, 'f'))).toBe(false);
      expect(await exists(`/etc/${marker}`)).toBe(false);
      expect(await exists(join(home, marker))).toBe(false);
    });

    it('then, with a workspace outside /tmp, a sibling directory is there but read-only, and /tmp is still private', async () => {
      const base = await realpath(await mkdtemp(join('/var/tmp', 'bhrain-sandbox-')));
      try {
        await mkdir(join(base, 'workspace'));
        await mkdir(join(base, 'outside'));
        const result = await runBash(
          box,
          'echo in > in.txt; echo x > ../outside/f; echo s > /tmp/s && cat /tmp/s',
          contextFor({ cwd: join(base, 'workspace') }),
        );
        expect(result.output).toMatch(/outside\/f: Read-only file system/);
        expect(result.output).toMatch(/--- stdout ---\ns\n/);
        expect(await readFile(join(base, 'workspace', 'in.txt'), 'utf8')).toBe('in\n');
        expect(await exists(join(base, 'outside', 'f'))).toBe(false);
      } finally {
        await rm(base, { recursive: true, force: true });
      }
    });

    it("then writes in the working directory land, and /tmp is writable and private to the sandbox: the toolbox's next call finds what the last one left, the host never does", async () => {
      const name = `bhrain-sandbox-tmp-${process.pid}-${Date.now()}`;
      const result = await runBash(box, `echo inside > made.txt && echo scratch > /tmp/${name} && cat /tmp/${name}`);
      expect(result.output).toBe('exit code: 0\n--- stdout ---\nscratch');
      expect(await readFile(join(workspace, 'made.txt'), 'utf8')).toBe('inside\n');
      expect(await exists(join('/tmp', name))).toBe(false);
      expect((await runBash(box, `cat /tmp/${name}`)).output).toBe('exit code: 0\n--- stdout ---\nscratch');
      // another toolbox has sandboxes of its own
      expect((await runBash(genBashToolBox(), `cat /tmp/${name}`)).output).toMatch(/No such file or directory/);
    });

    it('then a symlink in the workspace that points outside does not lead out', async () => {
      await symlink(outside, join(workspace, 'door'));
      const result = await runBash(box, 'echo x > door/through');
      expect(result.output).toMatch(/door\/through: (Read-only file system|No such file or directory)/);
      expect(await exists(join(outside, 'through'))).toBe(false);
      await rm(join(workspace, 'door'));
    });

    it('then .git/hooks and .git/config are read-only, while the rest of .git stays writable (git add works)', async () => {
      const repo = join(root, 'repo');
      await mkdir(repo);
      execFileSync('git', ['init', '-q', repo]);
      const configBefore = await readFile(join(repo, '.git/config'), 'utf8');
      const result = await runBash(
        box,
        [
          'echo "#!/bin/sh" > .git/hooks/pre-commit',
          'git config core.hooksPath /tmp/evil',
          'echo "[core] fsmonitor = evil" >> .git/config',
          'echo content > file.txt && git add file.txt && echo added',
        ].join('; '),
        contextFor({ cwd: repo }),
      );
      expect(result.output).toMatch(/pre-commit: Read-only file system/);
      expect(result.output).toMatch(/\.git\/config: Read-only file system/);
      expect(result.output).toMatch(/\nadded/);
      expect(await exists(join(repo, '.git/hooks/pre-commit'))).toBe(false);
      expect(await readFile(join(repo, '.git/config'), 'utf8')).toBe(configBefore);
    });

    it('then a root caller gets no capabilities: / cannot be remounted writable, kernel settings cannot be changed', async () => {
      const result = await runBash(
        box,
        'grep CapEff /proc/self/status; { mount -o remount,rw / && echo remounted; echo core > /proc/sys/kernel/core_pattern && echo sysctl-written; } 2>/dev/null; true',
      );
      expect(result.output).toBe('exit code: 0\n--- stdout ---\nCapEff:\t0000000000000000');
    });
  });

  describe('given read-only mode', () => {
    const readOnly = genBashToolBox({ sandbox: { mode: 'read-only' } });

    it('then the working directory cannot be written, and /tmp still can', async () => {
      const result = await runBash(readOnly, 'echo x > ro.txt; echo scratch > /tmp/s && cat /tmp/s');
      expect(result.output).toMatch(/ro\.txt: Read-only file system/);
      expect(result.output).toMatch(/--- stdout ---\nscratch/);
      expect(await exists(join(workspace, 'ro.txt'))).toBe(false);
    });
  });
});

describe('bash runs in a bubblewrap sandbox, on by default', () => {
  describe('given a server on the host at 127.0.0.1', () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createServer((_request, response) => response.end('hello from the host'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    // bash's /dev/tcp needs no curl; the sandbox's loopback is its own, so the host's 127.0.0.1 is another machine
    const fetchCommand = () => `exec 3<>/dev/tcp/127.0.0.1/${port} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && tail -n 1 <&3`;

    it('then the network is off: the host server cannot be reached', async () => {
      const result = await runBash(box, fetchCommand());
      expect(result.success).toBe(false);
      expect(result.output).toMatch(/Connection refused|Network is unreachable/);
    });

    it('then with allowNetwork it can', async () => {
      const result = await runBash(genBashToolBox({ sandbox: { allowNetwork: true } }), fetchCommand());
      expect(result.output).toBe('exit code: 0\n--- stdout ---\nhello from the host');
    });

    it('then, with the network off, a server the command starts itself is still reachable on its own loopback', async () => {
      const result = await runBash(
        box,
        `"${process.execPath}" -e "require('http').createServer((q, r) => r.end('x')).listen(8765, '127.0.0.1')" & ` +
          'for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/8765) 2>/dev/null && break; sleep 0.1; done; exec 3<>/dev/tcp/127.0.0.1/8765 && echo reached',
      );
      expect(result.output).toBe('exit code: 0\n--- stdout ---\nreached');
    });
  });

  describe('given a command whose processes try to outlive it', () => {
    it('then none is left, whatever it does with sessions, groups or its environment', async () => {
      const seconds = uniqueSeconds();
      const command = [
        `env -i setsid sleep ${seconds} &`,
        `setsid -f sleep ${seconds}`,
        `nohup sleep ${seconds} > /dev/null 2>&1 &`,
        `(sleep ${seconds} &) &`,
        `set -m; sleep ${seconds} &`,
        // as root: su starts a login shell that starts its own session (with capabilities dropped it may be refused)
        `su - root -c 'setsid sleep ${seconds} &' > /dev/null 2>&1`,
        // the escapes did start: the sandbox's own pid namespace sees them
        'sleep 0.2; echo "sleeping: $(pgrep -c -x sleep)"',
      ].join('\n');
      const result = await runBash(box, command);
      expect(result.output).toMatch(/^exit code: 0\n--- stdout ---\nsleeping: [5-9](\n|$)/);
      expect(result.elapsedMs).toBeLessThan(1_000);
      expect(await findLivingProcesses(`sleep ${seconds}`)).toEqual([]);
    });

    it('then a timeout kills them all within the grace', async () => {
      const seconds = uniqueSeconds();
      const result = await box.execute(
        {
          call: {
            id: 'c',
            name: 'bash',
            input: { command: `env -i setsid sleep ${seconds} & trap '' TERM; sleep ${seconds}`, timeout_ms: 300 },
          },
        },
        contextFor(),
      );
      expect(result.output).toBe('timed out after 300 ms; the process group was killed\n(no output)');
      expect(await findLivingProcesses(`sleep ${seconds}`)).toEqual([]);
    });
  });

  describe('given the sandbox off and a command whose processes try to outlive it (no pid namespace, so the group and a tag scan)', () => {
    const off = genBashToolBox({ sandbox: { mode: 'off' } });

    it('then those that leave the group (setsid, set -m, a new session) are found by the call’s tag and killed, promptly', async () => {
      const seconds = uniqueSeconds();
      const command = [
        `setsid sleep ${seconds} > /dev/null 2>&1 &`,
        `setsid -f sleep ${seconds}`,
        `(setsid sleep ${seconds} &)`,
        // job control: a group of its own, holding stdout open, which would make the call wait out the grace
        `set -m; sleep ${seconds} &`,
        `nohup sleep ${seconds} > /dev/null 2>&1 &`,
        'sleep 0.2; echo launched',
      ].join('\n');
      const result = await runBash(off, command);
      expect(result.output).toBe('exit code: 0\n--- stdout ---\nlaunched');
      expect(result.elapsedMs).toBeLessThan(1_500);
      expect(await findLivingProcesses(`sleep ${seconds}`)).toEqual([]);
    });

    it('then one that clears its environment and leaves the group outlives the call (the readme’s known limit)', async () => {
      const seconds = uniqueSeconds();
      await runBash(off, `env -i setsid sleep ${seconds} > /dev/null 2>&1 &\nsleep 0.2`);
      const left = await findLivingProcesses(`sleep ${seconds}`);
      for (const found of left) process.kill(found.pid, 'SIGKILL');
      expect(left.length).toBe(1);
    });
  });
});

describe('bash runs in a bubblewrap sandbox, on by default', () => {
  describe('given no bwrap on PATH', () => {
    let pathDir: string;
    beforeAll(async () => {
      // bash and what it needs, but no bwrap
      pathDir = join(root, 'bin-without-bwrap');
      await mkdir(pathDir);
      for (const program of ['bash', 'echo', 'cat'])
        await symlink(
          execFileSync('bash', ['-c', `command -v ${program}`], { encoding: 'utf8' }).trim() || `/bin/${program}`,
          join(pathDir, program),
        );
    });

    it('then bash is refused with a result that says how to install bubblewrap or opt out (fail closed)', async () => {
      const result = await runBash(box, 'echo ran > ran.txt', contextFor({ env: { ...process.env, PATH: pathDir } }));
      expect(result.success).toBe(false);
      expect(result.output).toMatch(
        /^bash is refused: bash runs in a bubblewrap sandbox, but bwrap was not found on PATH: install it \(Debian\/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap\), or configure the bash toolbox with sandbox: \{ mode: 'off' \}/,
      );
      expect(await exists(join(workspace, 'ran.txt'))).toBe(false);
    });

    it('then with the sandbox off, bash runs unconfined', async () => {
      const off = genBashToolBox({ sandbox: { mode: 'off' } });
      const result = await runBash(off, 'echo ran', contextFor({ env: { ...process.env, PATH: pathDir } }));
      expect(result.output).toBe('exit code: 0\n--- stdout ---\nran');
    });
  });

  describe('given bwrap that ends before it creates the sandbox (it cannot create namespaces, or refuses its arguments)', () => {
    it("then the run says the sandbox did not start, in bwrap's words, and the command never ran", async () => {
      const check = await checkBashSandbox({ env: process.env });
      if (!check.ok) throw new Error(check.reason);
      const run = await genBashSandboxPool({ idleMs: 1_000, maxIdle: 1 }).run(
        {
          key: 'broken',
          start: {
            ...check,
            bwrapArgs: ['--json-status-fd', '3', '--no-such-option', '--', 'bash', '-c', 'echo ran > ran-anyway.txt'],
            seccompFilter: Buffer.alloc(0),
          },
          command: 'echo ran > ran-anyway.txt',
          timeoutMs: 5_000,
          maxCaptureBytes: 1_000,
          killGraceMs: 500,
        },
        { cwd: workspace, env: process.env },
      );
      expect(run.spawnError).toMatch(/^the sandbox did not start \(bwrap exit 1\): bwrap: Unknown option --no-such-option/);
      expect(await exists(join(workspace, 'ran-anyway.txt'))).toBe(false);
    });
  });

  describe('given a bwrap older than 0.5.0, which has no --perms (Debian 11, Ubuntu 20.04, RHEL 9)', () => {
    it('then the sandbox check fails closed, saying bubblewrap 0.5.0 or newer is needed', async () => {
      // an old bwrap's own answer to the option it lacks, from a program of that name first on PATH
      const oldDir = join(root, 'bin-old-bwrap');
      await mkdir(oldDir);
      const realBwrap = execFileSync('bash', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
      await writeFile(
        join(oldDir, 'bwrap'),
        `#!/bin/sh\nfor arg; do [ "$arg" = --perms ] && { echo "bwrap: Unknown option --perms" >&2; exit 1; }; done\nexec ${realBwrap} "$@"\n`,
        { mode: 0o755 },
      );
      await symlink(execFileSync('bash', ['-c', 'command -v bash'], { encoding: 'utf8' }).trim(), join(oldDir, 'bash'));
      const check = await checkBashSandbox({ env: { PATH: `${oldDir}:${process.env.PATH}` } });
      expect(check).toEqual({
        ok: false,
        reason: expect.stringMatching(
          /could not create one \(the sandbox did not start \(bwrap exit 1\): bwrap: Unknown option --perms\)\. bhrain's sandbox needs bubblewrap 0\.5\.0 or newer: upgrade it$/,
        ),
      });
    });
  });

  describe('given a platform without bubblewrap (macOS)', () => {
    it('then the sandbox check fails closed, saying it is not supported yet', async () => {
      expect(await checkBashSandbox({ env: process.env, platform: 'darwin' })).toEqual({
        ok: false,
        reason:
          'bash runs in a sandbox by default, but sandboxing on darwin is not supported yet (bhrain uses bubblewrap, which is Linux-only)',
      });
    });
  });

  describe('given an unknown mode', () => {
    it('then the toolbox is not built, and the error lists the modes', () => {
      expect(() => genBashToolBox({ sandbox: { mode: 'strict' as never } })).toThrow(BadRequestError);
      expect(() => genBashToolBox({ sandbox: { mode: 'strict' as never } })).toThrow(
        'unknown bash sandbox mode "strict": choose one of read-only, workspace-write, off',
      );
    });
  });

  describe('given a library config (BhrainConfig.sandbox)', () => {
    it('then the default bash toolbox runs in the mode it names, and an unknown mode fails at configuration', async () => {
      const config = configureBhrain({ atom: 'claude/haiku', sandbox: { mode: 'read-only' } });
      const bash = config.toolBoxes.find((toolBox) => toolBox.name === 'bash')!;
      const result = await runBash(bash, 'echo x > via-config.txt');
      expect(result.output).toMatch(/via-config\.txt: Read-only file system/);
      expect(() => configureBhrain({ atom: 'claude/haiku', sandbox: { mode: 'strict' as never } })).toThrow(
        /sandbox\.mode must be one of read-only, workspace-write, off/,
      );
    });
  });

  describe('given the model reads the tool description', () => {
    it('then it says where commands run and whether the network is on', () => {
      expect(box.definitions[0].description).toContain('It can write only inside the working directory and /tmp');
      expect(box.definitions[0].description).toContain('The network is off');
      expect(genBashToolBox({ sandbox: { mode: 'off' } }).definitions[0].description).toContain(
        'Sandbox: none: the command runs unconfined',
      );
    });
  });
});

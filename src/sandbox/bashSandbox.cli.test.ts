import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { genCliEnv, runBhrain } from '../../test/acceptance/runCli.js';
import { useStandin } from '#standin/useStandin.js';
import { tempDir } from '#test-helpers/fs.js';

// bash's sandbox through the CLI (bin/bhrain loads dist/: build first): the flags, and failing closed at start

const { standin } = useStandin();
let root: string;
let cwd: string;
beforeAll(async () => {
  root = tempDir('bhrain-sandbox-cli-');
  cwd = join(root, 'workspace');
  await mkdir(cwd);
});
afterAll(async () => rm(root, { recursive: true, force: true }));
const envFor = (overrides: Record<string, string | undefined> = {}) =>
  genCliEnv({ standin: standin(), home: join(root, 'home') }, overrides);

describe('the CLI runs bash in the sandbox, with --sandbox and --allow-network', () => {
  it('given an unknown --sandbox mode, then exit 2 and the modes are listed', async () => {
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', '--sandbox', 'strict', '--input', 'x'], cwd, env: envFor() });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("bhrain act: unknown --sandbox 'strict': choose one of read-only, workspace-write, off\n");
  });

  it('given ask with a mode other than read-only, then exit 2; ask has no --allow-network', async () => {
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '--sandbox', 'workspace-write', '--input', 'x'], cwd, env: envFor() });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'bhrain ask: ask is always read-only: --sandbox workspace-write is not allowed (omit it, or pass --sandbox read-only)\n',
    );
    const network = await runBhrain({ args: ['ask', '--atom', 'qwen', '--allow-network', '--input', 'x'], cwd, env: envFor() });
    expect(network.code).toBe(2);
    expect(network.stderr).toMatch(/unknown option '--allow-network'/);
  });

  describe('given no bwrap on PATH', () => {
    let pathDir: string;
    beforeAll(async () => {
      pathDir = join(root, 'bin-without-bwrap');
      await mkdir(pathDir);
      for (const program of ['bash', 'node'])
        await symlink(execFileSync('bash', ['-c', `command -v ${program}`], { encoding: 'utf8' }).trim(), join(pathDir, program));
    });

    it('then act fails at start with exit 2, saying how to install bubblewrap or opt out, and calls no LLM', async () => {
      const run = await runBhrain({ args: ['act', '--atom', 'qwen', '--input', 'list files'], cwd, env: envFor({ PATH: pathDir }) });
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(
        'bhrain act: bash runs in a bubblewrap sandbox, but bwrap was not found on PATH: install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or run with --sandbox off to run bash unconfined\n',
      );
      expect(standin().requests).toHaveLength(0);
    });

    it('then ask, which runs no bash, still runs', async () => {
      standin().script({ text: 'nothing to change' });
      const run = await runBhrain({
        args: ['ask', '--atom', 'qwen', '--quiet', '--input', 'what is here?'],
        cwd,
        env: envFor({ PATH: pathDir }),
      });
      expect(run.code).toBe(0);
      expect(run.stdout).toBe('nothing to change\n');
    });

    it('then act with the sandbox off in the user settings runs bash unconfined (the probe the CLI starts early goes unused)', async () => {
      const config = join(root, 'config-sandbox-off');
      await mkdir(config, { recursive: true });
      await writeFile(join(config, 'settings.json'), JSON.stringify({ sandbox: 'off' }));
      standin().script({ toolCalls: [{ name: 'bash', input: { command: 'echo ran' } }] }, { text: 'ran it' });
      const run = await runBhrain({
        args: ['act', '--atom', 'qwen', '--quiet', '--input', 'run echo'],
        cwd,
        env: envFor({ PATH: pathDir, BHRAIN_CONFIG_DIR: config }),
      });
      expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({ code: 0, stdout: 'ran it\n', stderr: '' });
      expect(JSON.stringify(standin().requests.at(-1)?.body.messages)).toContain('ran');
    });
  });

  it('given a bash call that writes inside and outside the workspace, then by default only the inside write lands', async () => {
    const outside = join(root, 'home', `outside-${Date.now()}`);
    await mkdir(outside, { recursive: true });
    standin().script(
      { toolCalls: [{ name: 'bash', input: { command: `echo in > inside.txt; echo out > ${outside}/f; echo done` } }] },
      { text: 'tried both' },
    );
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', '--quiet', '--input', 'write two files'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    expect(await readFile(join(cwd, 'inside.txt'), 'utf8')).toBe('in\n');
    await expect(stat(join(outside, 'f'))).rejects.toThrow(/ENOENT/);
    // under the host's /tmp, which the sandbox's private /tmp hides
    expect(JSON.stringify(standin().requests[1].body)).toMatch(
      new RegExp(`${outside}/f: (Read-only file system|No such file or directory)`),
    );
  });
});

// bounds: a hostile model asks the built-in grep for a regex that backtracks for ever; SIGTERM to the
// built CLI must still stop the run gracefully: exit 130 within 2 s, with the run's refs saved
import { spawn } from 'node:child_process';
import { readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { genCliEnv, PACKAGE_ROOT } from '../acceptance/runCli.js';
import { useStandin } from '#standin/useStandin.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();

/** SIGTERM must end the run within this long */
const MAX_EXIT_MS = 2_000;

/** past this long the CLI is taken as hung and killed, so a regression fails the test instead of hanging it */
const HUNG_AFTER_MS = 10_000;

/**
 * .what = a PATH with every program of the current one except ripgrep, linked into one temp directory
 * .why = the honest way a user gets the built-in grep engine: rg is not installed
 */
const genPathWithoutRipgrep = async (): Promise<string> => {
  const bin = tempDir('bhrain-path-');
  const linked = new Set<string>(['rg']);
  for (const directory of (process.env.PATH ?? '').split(delimiter).filter(Boolean))
    for (const name of await readdir(directory).catch(() => [] as string[])) {
      if (linked.has(name)) continue;
      linked.add(name);
      await symlink(join(directory, name), join(bin, name));
    }
  return bin;
};

describe('SIGTERM during a runaway built-in grep', () => {
  let pathWithoutRipgrep: string;
  const made: string[] = [];
  beforeAll(async () => {
    pathWithoutRipgrep = await genPathWithoutRipgrep();
    made.push(pathWithoutRipgrep);
  });
  afterAll(async () => {
    await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it.each(['ask', 'act'] as const)(
    'bhrain %s exits 130 within 2 s with its refs saved',
    async (skill) => {
      const home = await tempDir('bhrain-home-');
      const cwd = await tempDir('bhrain-sigterm-');
      // (a+)+$ against many a's and then a b tries every way to split the a's: 2^60 steps
      await writeFile(join(cwd, 'trap.txt'), `${'a'.repeat(60)}b\n`);
      standin().script({ toolCalls: [{ name: 'grep', input: { pattern: '(a+)+$', path: 'trap.txt' } }] }, { text: 'never reached' });
      const env = genCliEnv({ standin: standin(), home }, { PATH: pathWithoutRipgrep });
      const child = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin', 'bhrain'), skill, '--atom', 'qwen', '--input', 'find the trap'], {
        cwd,
        env: env as NodeJS.ProcessEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('close', (code, signal) => resolve({ code, signal })),
      );
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      // whatever fails below, the CLI does not outlive the test
      const hung = setTimeout(() => child.kill('SIGKILL'), HUNG_AFTER_MS * 2);
      let exit: { code: number | null; signal: NodeJS.Signals | null; exitMs: number };
      try {
        // the progress line is printed as the call starts; a moment later the regex is deep in its backtracking
        const until = Date.now() + HUNG_AFTER_MS;
        while (!stderr.includes('→ grep') && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 25));
        expect(stderr).toContain('→ grep trap.txt');
        await new Promise((resolve) => setTimeout(resolve, 500));

        const sentAt = Date.now();
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), HUNG_AFTER_MS);
        exit = { ...(await exited), exitMs: Date.now() - sentAt };
        clearTimeout(killer);
      } finally {
        clearTimeout(hung);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      const { code, signal, exitMs } = exit;

      expect({ code, signal }).toEqual({ code: 130, signal: null });
      expect(exitMs).toBeLessThan(MAX_EXIT_MS);
      expect(stderr).toMatch(/SIGTERM: stopping/);
      const episode = /^episode: ([0-9a-f]{64})$/m.exec(stderr)?.[1];
      expect(episode).toBeDefined();
      expect(await readdir(join(home, 'refs', 'episodes'))).toContain(`${episode}.json`);
    },
    30_000,
  );
});

import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { PACKAGE_ROOT, runProcess } from '../../../test/acceptance/runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const MODULE = JSON.stringify(join(PACKAGE_ROOT, 'dist/agent/session/defaultSpillDir.js'));

/** a node process that takes a default spill dir, writes a file in it, prints the dir, then runs `then` */
const holderScript = (then: string): string =>
  `import { mkdirSync, writeFileSync } from 'node:fs';
   import { genDefaultSpillDir } from ${MODULE};
   const dir = genDefaultSpillDir('session-1');
   mkdirSync(dir, { recursive: true });
   writeFileSync(dir + '/bash-call.txt', 'the full output');
   console.log(dir);
   ${then}`;

const runHolder = (tmp: string, then = '') =>
  runProcess({
    command: process.execPath,
    args: ['--input-type=module', '-e', holderScript(then)],
    cwd: tmp,
    env: { PATH: process.env.PATH, TMPDIR: tmp },
  });

describe("a library session's default spill dir", () => {
  it('is kept while its process lives and removed when it exits, the shared root too when no other process holds it', async () => {
    const tmp = tempDir('bhrain-spill-home-');
    const run = await runHolder(tmp);
    const dir = run.stdout.trim();
    expect(run.code).toBe(0);
    expect(dir).toMatch(new RegExp(`^${tmp}/bhrain-tool-output/\\d+/session-1$`));
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('left by a process killed before it could exit is removed by the next process that takes one; a living holder keeps its own', async () => {
    const tmp = tempDir('bhrain-spill-home-');
    // a holder that stays alive until it is killed
    const killed = spawn(process.execPath, ['--input-type=module', '-e', holderScript('setInterval(() => {}, 1000);')], {
      cwd: tmp,
      env: { PATH: process.env.PATH, TMPDIR: tmp },
    });
    const killedDir = await new Promise<string>((resolve) => killed.stdout.once('data', (chunk) => resolve(String(chunk).trim())));
    const living = spawn(process.execPath, ['--input-type=module', '-e', holderScript('setInterval(() => {}, 1000);')], {
      cwd: tmp,
      env: { PATH: process.env.PATH, TMPDIR: tmp },
    });
    const livingDir = await new Promise<string>((resolve) => living.stdout.once('data', (chunk) => resolve(String(chunk).trim())));
    killed.kill('SIGKILL');
    await new Promise((resolve) => killed.once('close', resolve));
    expect(existsSync(killedDir)).toBe(true); // SIGKILL runs no exit handler

    const next = await runHolder(tmp);
    expect(next.code).toBe(0);
    expect(existsSync(killedDir)).toBe(false);
    expect(existsSync(join(livingDir, 'bash-call.txt'))).toBe(true);
    expect(existsSync(next.stdout.trim())).toBe(false); // the next one's own, gone at its exit; the root stays for the living

    living.kill('SIGTERM'); // a signal's default action is no clean exit either: the next holder would sweep it
    await new Promise((resolve) => living.once('close', resolve));
  });
});

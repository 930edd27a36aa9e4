import { chmodSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { checkBashSandbox } from '../sandbox/checkBashSandbox.js';
import { findHostProgram } from './findHostProgram.js';
import { genHostProgramEnv } from './genHostProgramEnv.js';
import { tempDir } from '#test-helpers/fs.js';

// a program bhrain starts itself outside the sandbox is never one the workspace holds: `npm run` and `npx` put the
// project's node_modules/.bin first on PATH, and a relative entry resolves in the working directory

let base: string;
let workspace: string;
let planted: string;
beforeEach(() => {
  base = tempDir('bhrain-hostprog-');
  workspace = join(base, 'ws');
  planted = join(workspace, 'node_modules', '.bin');
  mkdirSync(planted, { recursive: true });
  for (const name of ['git', 'bwrap', 'bash']) {
    writeFileSync(join(planted, name), `#!/bin/sh\ntouch ${join(base, `${name}-planted-ran`)}\n`);
    chmodSync(join(planted, name), 0o755);
  }
  // a link from outside into the workspace is the workspace
  symlinkSync(planted, join(base, 'link-to-bin'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('findHostProgram and genHostProgramEnv', () => {
  it('skip PATH entries inside the workspace (by path or through a link), and relative ones', () => {
    const path = [planted, join(base, 'link-to-bin'), 'node_modules/.bin', '.', process.env.PATH].join(':');
    expect(findHostProgram({ name: 'git', path, untrusted: [workspace] })).not.toMatch(new RegExp(`^${base}`));
    expect(findHostProgram({ name: 'git', path: planted, untrusted: [] })).toBe(join(planted, 'git'));
    const env = genHostProgramEnv({ env: { PATH: path, HOME: '/home/u', GH_TOKEN: 'ghp_x', GIT_DIR: '/x' }, untrusted: [workspace] });
    expect(env).toEqual({ PATH: process.env.PATH, HOME: '/home/u', LANG: 'C', LC_ALL: 'C' });
  });

  it("the sandbox check never takes bwrap or bash from the workspace's PATH entries", async () => {
    const check = await checkBashSandbox({ env: { PATH: `${planted}:${process.env.PATH}` }, cwd: workspace });
    if (check.ok) expect([check.bwrapPath, check.bashPath].filter((path) => path.startsWith(base))).toEqual([]);
    expect(existsSync(join(base, 'bwrap-planted-ran'))).toBe(false);
  });
});

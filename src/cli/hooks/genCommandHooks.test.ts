import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { genCommandHooks } from './genCommandHooks.js';
import { tempDir } from '#test-helpers/fs.js';

// a command hook runs outside the sandbox: the bash it runs in is never one the workspace holds (`npm run` puts the
// project's node_modules/.bin first on PATH)

let base: string;
let workspace: string;
let planted: string;
beforeEach(() => {
  base = tempDir('bhrain-hookbash-');
  workspace = join(base, 'ws');
  planted = join(workspace, 'node_modules', '.bin');
  mkdirSync(planted, { recursive: true });
  writeFileSync(join(planted, 'bash'), `#!/bin/sh\ntouch ${join(base, 'bash-planted-ran')}\n`);
  chmodSync(join(planted, 'bash'), 0o755);
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('genCommandHooks', () => {
  it("a command hook's bash is not the workspace's, though the workspace's node_modules/.bin is first on PATH", async () => {
    const hooks = genCommandHooks(
      { settings: [{ hooks: { SessionStart: [{ hooks: [{ type: 'command', command: 'echo ran-by-real-bash' }] }] } }] },
      // HOME empty: bash on a socket reads ~/.bashrc, which is the user's own and may run anything on PATH
      { cwd: workspace, projectDir: workspace, env: { PATH: `${planted}:${process.env.PATH}`, HOME: base } },
    );
    const output = await hooks.SessionStart![0].run({ hook_event_name: 'SessionStart' } as never, { signal: new AbortController().signal });
    expect(output).toMatchObject({ exitCode: 0, hookSpecificOutput: { additionalContext: 'ran-by-real-bash' } });
    expect(existsSync(join(base, 'bash-planted-ran'))).toBe(false);
  });
});

import { spawnGroup } from '../../../sandbox/process/spawnGroup.js';

let cached: Promise<boolean> | undefined;

/**
 * .what = whether ripgrep (rg) runs from PATH; checked once per process, then cached
 * .why = grep prefers rg when it is there, without paying a process spawn per call to find out
 */
export const hasRipgrep = (): Promise<boolean> =>
  (cached ??= spawnGroup({
    command: 'rg',
    args: ['--version'],
    // any directory that is there: rg --version reads none
    cwd: '/',
    env: process.env,
    stdio: ['ignore', 'ignore', 'ignore'],
    timeoutMs: 5_000,
    killGraceMs: 0,
  }).ended.then((end) => end.exitCode === 0));

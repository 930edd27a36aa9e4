import { execFile } from 'node:child_process';

let cached: Promise<boolean> | undefined;

/**
 * .what = whether ripgrep (rg) runs from PATH; checked once per process, then cached
 * .why = grep prefers rg when it is there, without paying a process spawn per call to find out
 */
export const hasRipgrep = (): Promise<boolean> =>
  (cached ??= new Promise((resolve) => {
    execFile('rg', ['--version'], { timeout: 5_000, windowsHide: true }, (error) => resolve(!error));
  }));

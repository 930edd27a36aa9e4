import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { holdPlaceholders, isPlaceholderOfAnyone } from './holdPlaceholders.js';

const dirs: string[] = [];
const genPath = () => {
  dirs.push(mkdtempSync(join(tmpdir(), 'bhrain-holds-')));
  return join(dirs[dirs.length - 1], '.bashrc');
};
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
/** the registry entry another process would have written for a path (holdPlaceholders' layout) */
const registerAs = (path: string, pid: number) => {
  const registry = join(tmpdir(), `bhrain-placeholder-${createHash('sha256').update(path).digest('hex').slice(0, 32)}`);
  mkdirSync(registry, { recursive: true });
  writeFileSync(join(registry, String(pid)), '');
};

describe('issue 30 protected paths: placeholders live as long as a sandbox holds them, and no longer', () => {
  it('an empty directory is made, shared by two holders of this process, and removed by the last to let go', () => {
    const path = genPath();
    const first = holdPlaceholders([path]);
    const second = holdPlaceholders([path]);
    expect(existsSync(path)).toBe(true);
    expect(isPlaceholderOfAnyone(path)).toBe(true);
    first();
    first();
    expect(existsSync(path)).toBe(true);
    second();
    expect(existsSync(path)).toBe(false);
  });

  it('another live process that holds it keeps it; a dead one does not, and the next holder cleans up after it', async () => {
    const path = genPath();
    const other = spawn('sleep', ['30']);
    registerAs(path, other.pid!);
    holdPlaceholders([path])();
    expect(existsSync(path)).toBe(true);
    other.kill('SIGKILL');
    await new Promise((resolve) => other.once('exit', resolve));
    expect(isPlaceholderOfAnyone(path)).toBe(true);
    holdPlaceholders([path])();
    expect(existsSync(path)).toBe(false);
  });

  it('a placeholder something was written into is no longer one: it is left as it is', () => {
    const path = genPath();
    const release = holdPlaceholders([path]);
    writeFileSync(join(path, 'settings.json'), '{}');
    expect(isPlaceholderOfAnyone(path)).toBe(false);
    release();
    expect(existsSync(join(path, 'settings.json'))).toBe(true);
    expect(isPlaceholderOfAnyone(path)).toBe(false);
  });
});

import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { genWorkspaceRoots } from '../../sandbox/genBwrapArgs.js';
import { resolveAddDirs } from './resolveAddDirs.js';
import { tempDir } from '#test-helpers/fs.js';

describe('resolveAddDirs: the directories a session may change besides cwd, each checked', () => {
  const env = (home: string, path = '/usr/bin:/bin') => ({ HOME: home, PATH: path, BHRAIN_HOME: join(home, 'bhrain-home') });

  it('a directory through a symlink is added by its real path', () => {
    const base = tempDir('bhrain-add-dirs-');
    mkdirSync(join(base, 'shared'));
    symlinkSync(join(base, 'shared'), join(base, 'link'));
    expect(resolveAddDirs([join(base, 'link')], { env: env(join(base, 'home')) })).toEqual([join(base, 'shared')]);
  });

  it('a relative path, a file, and a directory holding one of PATH are refused, each saying why', () => {
    const base = tempDir('bhrain-add-dirs-');
    writeFileSync(join(base, 'file'), '');
    mkdirSync(join(base, 'tools', 'bin'), { recursive: true });
    const refusal = (dir: string, path?: string) => {
      try {
        resolveAddDirs([dir], { env: env(join(base, 'home'), path) });
        return null;
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect([
      refusal('shared'),
      refusal(join(base, 'file')),
      refusal(join(base, 'tools'), `/usr/bin:${join(base, 'tools', 'bin')}`),
    ]).toEqual([
      'cannot add the directory shared: it is not an absolute path (the CLI resolves --add-dir against the current directory)',
      `cannot add the directory ${join(base, 'file')}: it does not exist or is not a directory`,
      `cannot add the directory ${join(base, 'tools')}: it holds ${join(base, 'tools', 'bin')}, a directory on PATH: a command could replace a program that bhrain or you run outside the sandbox. Add a directory that holds none, or take it off PATH for this run`,
    ]);
  });

  it("bhrain's home and what lies in it are never added", () => {
    const base = tempDir('bhrain-add-dirs-');
    mkdirSync(join(base, 'home', 'bhrain-home', 'runs'), { recursive: true });
    expect(() => resolveAddDirs([join(base, 'home', 'bhrain-home', 'runs')], { env: env(join(base, 'home')) })).toThrow(
      /is hidden from the model \(\$BHRAIN_HOME: /,
    );
  });
});

describe('genWorkspaceRoots: one root per directory no other root holds', () => {
  it('an added directory inside the working directory adds nothing; one holding it takes its place; duplicates go', () => {
    expect(genWorkspaceRoots('/w/repo', ['/w/repo/pkg', '/w/shared', '/w/shared'])).toEqual(['/w/repo', '/w/shared']);
    expect(genWorkspaceRoots('/w/repo/pkg', ['/w/repo'])).toEqual(['/w/repo']);
    expect(genWorkspaceRoots('/w/repo')).toEqual(['/w/repo']);
  });
});

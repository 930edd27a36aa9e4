import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { genRecordingLog } from '#standin/useStandin.js';
import { DEFAULT_PROJECT_INSTRUCTIONS_MAX_BYTES, loadProjectInstructions } from './loadProjectInstructions.js';
import { tempDir } from '#test-helpers/fs.js';

/** a temp dir (real path, so paths compare equal) holding a git repository under repo/, and an empty user config dir */
const genWorld = async () => {
  const base = tempDir('bhrain-instructions-');
  const repo = join(base, 'repo');
  const configDir = join(base, 'config');
  await mkdir(join(repo, 'sub', 'deeper'), { recursive: true });
  await mkdir(configDir);
  execFileSync('git', ['init', '-q', repo]);
  const env = { BHRAIN_CONFIG_DIR: configDir };
  return { base, repo, configDir, env };
};

/** the paths of the <file> elements of a text, in order */
const labelled = (text: string) => [...text.matchAll(/<file path="([^"]+)">/g)].map((match) => match[1]);

describe('project instructions: the loader', () => {
  it('project instructions: AGENTS.md at the root and in a subdir are both read, root first, nearest last, each labelled with its path', async () => {
    const { base, repo, env } = await genWorld();
    await writeFile(join(base, 'AGENTS.md'), 'ABOVE THE REPO: never read\n');
    await writeFile(join(repo, 'AGENTS.md'), 'root rule: use tabs\n');
    await writeFile(join(repo, 'CLAUDE.md'), 'root claude rule\n');
    await writeFile(join(repo, 'sub', 'AGENTS.md'), 'sub rule: no semicolons\n');

    const loaded = await loadProjectInstructions({ cwd: join(repo, 'sub', 'deeper') }, { env });

    expect(loaded.repoRoot).toBe(repo);
    expect(labelled(loaded.text)).toEqual([join(repo, 'AGENTS.md'), join(repo, 'CLAUDE.md'), join(repo, 'sub', 'AGENTS.md')]);
    expect(loaded.text).toContain(`<file path="${join(repo, 'AGENTS.md')}">\nroot rule: use tabs\n</file>`);
    expect(loaded.text.indexOf('root rule')).toBeLessThan(loaded.text.indexOf('sub rule'));
    expect(loaded.text).not.toContain('ABOVE THE REPO');
    expect(loaded.files.map((file) => file.scope)).toEqual(['project', 'project', 'project']);
    expect(loaded.cut).toBe(false);
  });

  it("project instructions: the user's own AGENTS.md / CLAUDE.md in the bhrain config dir come first (most general)", async () => {
    const { repo, configDir, env } = await genWorld();
    await writeFile(join(configDir, 'CLAUDE.md'), 'user rule: be brief\n');
    await writeFile(join(repo, 'AGENTS.md'), 'repo rule\n');
    const loaded = await loadProjectInstructions({ cwd: repo }, { env });
    expect(labelled(loaded.text)).toEqual([join(configDir, 'CLAUDE.md'), join(repo, 'AGENTS.md')]);
    expect(loaded.files[0]).toMatchObject({ scope: 'user', bytes: 20, keptBytes: 20 });
  });

  it('project instructions: outside a repository only the working directory is read', async () => {
    const { base, env } = await genWorld();
    const outside = join(base, 'plain', 'dir');
    await mkdir(outside, { recursive: true });
    await writeFile(join(base, 'plain', 'AGENTS.md'), 'parent: not read\n');
    await writeFile(join(outside, 'AGENTS.md'), 'here: read\n');
    const loaded = await loadProjectInstructions({ cwd: outside }, { env });
    expect(loaded.repoRoot).toBeNull();
    expect(labelled(loaded.text)).toEqual([join(outside, 'AGENTS.md')]);
  });

  it('project instructions: none found is an empty text, and a git worktree (.git a file) counts as a root', async () => {
    const { base, env } = await genWorld();
    const worktree = join(base, 'wt');
    await mkdir(join(worktree, 'a'), { recursive: true });
    await writeFile(join(worktree, '.git'), 'gitdir: /nowhere\n');
    await writeFile(join(worktree, 'AGENTS.md'), 'worktree rule\n');
    expect(await loadProjectInstructions({ cwd: join(worktree, 'a') }, { env })).toMatchObject({ repoRoot: worktree });
    expect((await loadProjectInstructions({ cwd: join(worktree, 'a') }, { env })).text).toContain('worktree rule');
    const empty = await loadProjectInstructions({ cwd: join(base, 'config') }, { env });
    expect(empty).toEqual({ text: '', files: [], repoRoot: null, cut: false });
  });

  it('project instructions: CLAUDE.md as a symlink to AGENTS.md is read once; an empty file is left out', async () => {
    const { repo, env } = await genWorld();
    await writeFile(join(repo, 'AGENTS.md'), 'shared rule\n');
    await symlink('AGENTS.md', join(repo, 'CLAUDE.md'));
    await writeFile(join(repo, 'sub', 'AGENTS.md'), '  \n');
    const loaded = await loadProjectInstructions({ cwd: join(repo, 'sub') }, { env });
    expect(labelled(loaded.text)).toEqual([join(repo, 'AGENTS.md')]);
    expect(loaded.text.match(/shared rule/g)).toHaveLength(1);
  });

  it('project instructions: a file that is not UTF-8 text, binary, unreadable or not a file is skipped with a warning, never a crash', async () => {
    const { repo, env } = await genWorld();
    await writeFile(join(repo, 'AGENTS.md'), Buffer.from([0x72, 0x75, 0x6c, 0x65, 0xff, 0xfe, 0x0a])); // Latin-1 bytes, not UTF-8
    await writeFile(join(repo, 'CLAUDE.md'), Buffer.from('rule\0binary'));
    await mkdir(join(repo, 'sub', 'AGENTS.md')); // a directory by that name
    await symlink('CLAUDE.md', join(repo, 'sub', 'CLAUDE.md')); // a loop: CLAUDE.md -> itself
    await writeFile(join(repo, 'sub', 'deeper', 'AGENTS.md'), 'the one good rule\n');
    const { log, lines } = genRecordingLog();

    const loaded = await loadProjectInstructions({ cwd: join(repo, 'sub', 'deeper') }, { env, log });

    expect(labelled(loaded.text)).toEqual([join(repo, 'sub', 'deeper', 'AGENTS.md')]);
    expect(lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      `project instructions: ${join(repo, 'AGENTS.md')} is not UTF-8 text; it is skipped`,
      `project instructions: ${join(repo, 'CLAUDE.md')} is binary, not text; it is skipped`,
      `project instructions: ${join(repo, 'sub', 'AGENTS.md')} is not a regular file; it is skipped`,
      `project instructions: ${join(repo, 'sub', 'CLAUDE.md')} could not be read (ELOOP); it is skipped`,
    ]);
  });

  it('project instructions: over the cap, small files stay whole and the largest is cut, with a notice in the block and a warning', async () => {
    const { repo, configDir, env } = await genWorld();
    await writeFile(join(configDir, 'AGENTS.md'), `user ${'u'.repeat(14)}\n`); // 20 bytes
    await writeFile(join(repo, 'AGENTS.md'), `root ${'r'.repeat(294)}\n`); // 300 bytes
    await writeFile(join(repo, 'sub', 'AGENTS.md'), `sub ${'s'.repeat(96)}\n`); // 101 bytes
    const { log, lines } = genRecordingLog();

    const loaded = await loadProjectInstructions({ cwd: join(repo, 'sub'), maxBytes: 250 }, { env, log });

    expect(loaded.cut).toBe(true);
    expect(loaded.files.map((file) => [file.bytes, file.keptBytes])).toEqual([
      [20, 20],
      [300, 129],
      [101, 101],
    ]);
    expect(loaded.text).toContain(`user ${'u'.repeat(14)}\n</file>`);
    expect(loaded.text).toContain(
      `root ${'r'.repeat(124)}\n[bhrain: this file was cut here, after 129 of its 300 bytes: project instructions are capped at 250 bytes in all, shared among the files. Read the file for the rest.]\n</file>`,
    );
    expect(loaded.text).toContain(`sub ${'s'.repeat(96)}\n</file>`);
    expect(lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      `project instructions are over the cap of 250 bytes: ${join(repo, 'AGENTS.md')} cut to 129 of 300 bytes. The model is told to read them for the rest`,
    ]);
  });

  it('project instructions: a cap smaller than the number of files leaves some out, saying so', async () => {
    const { repo, env } = await genWorld();
    await writeFile(join(repo, 'AGENTS.md'), 'a\n');
    await writeFile(join(repo, 'CLAUDE.md'), 'b\n');
    const loaded = await loadProjectInstructions({ cwd: repo, maxBytes: 1 }, { env });
    expect(loaded.files.map((file) => file.keptBytes)).toEqual([0, 1]);
    expect(loaded.text).toContain(
      `<file path="${join(repo, 'AGENTS.md')}">\n[bhrain: this file (2 bytes) was left out: project instructions are capped at 1 bytes in all`,
    );
  });

  it('project instructions: the default cap is 32 KiB; a huge file is cut there, never inside a character, and only its head is read', async () => {
    const { repo, env } = await genWorld();
    // 3-byte characters, so the cap falls inside one; 10 MB in all
    await writeFile(join(repo, 'AGENTS.md'), 'é€'.repeat(2_000_000));
    const started = performance.now();
    const loaded = await loadProjectInstructions({ cwd: repo }, { env });
    const elapsedMs = performance.now() - started;

    expect(DEFAULT_PROJECT_INSTRUCTIONS_MAX_BYTES).toBe(32_768);
    expect(loaded.files).toEqual([{ path: join(repo, 'AGENTS.md'), scope: 'project', bytes: 10_000_000, keptBytes: 32_768 }]);
    const body = loaded.text.split('\n')[1];
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(32_768);
    expect(Buffer.byteLength(body)).toBeGreaterThan(32_760);
    expect(body).not.toContain('\uFFFD');
    expect(loaded.text).toMatch(
      /\[bhrain: this file was cut here, after 3276\d of its 10000000 bytes: project instructions are capped at 32768 bytes in all/,
    );
    expect(elapsedMs).toBeLessThan(500);
  });

  it('project instructions: a bad cap is an error naming it', async () => {
    await expect(loadProjectInstructions({ cwd: tmpdir(), maxBytes: 0 })).rejects.toThrow(
      /maxBytes must be a whole number of bytes of at least 1, got 0/,
    );
  });
});

// checkpoints and `bhrain rewind`, proved through the built CLI against the stand-in, in temp git repositories holding
// uncommitted work of the user's own (and one directory that is no repository): what a run changed by write, edit and
// bash is put back exactly, the user's own edits are untouched byte for byte, and git sees nothing bhrain made
import { spawn } from 'node:child_process';
import { chmod, lstat, mkdir, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, PACKAGE_ROOT, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';
import { genGitRepo, runGit } from '#test-helpers/git.js';

const { standin } = useStandin();
let home: string;
let cwd: string;
beforeEach(() => {
  home = tempDir('bhrain-rewind-home-');
});
afterEach(async () => {
  await Promise.all([rm(home, { recursive: true, force: true }), rm(cwd, { recursive: true, force: true })]);
});

/** .what = every entry under a directory but .git: a file's mode and bytes, a symlink's target, a directory */
const snapshot = async (root: string): Promise<Record<string, string>> => {
  const entries: Record<string, string> = {};
  const walk = async (dir: string, prefix: string) => {
    for (const name of (await readdir(dir)).sort()) {
      if (name === '.git') continue;
      const path = join(dir, name);
      const stat = await lstat(path);
      const key = `${prefix}${name}`;
      if (stat.isSymbolicLink()) entries[key] = `link -> ${await readlink(path)}`;
      else if (stat.isDirectory()) {
        entries[key] = 'dir';
        await walk(path, `${key}/`);
      } else entries[key] = `${(stat.mode & 0o777).toString(8)} ${(await readFile(path)).toString('base64')}`;
    }
  };
  await walk(root, '');
  return entries;
};

/** .what = a repository with commits, then the user's own uncommitted work: edits, an untracked file, an ignored one */
const genUserRepo = async (): Promise<string> => {
  const repo = genGitRepo({
    prefix: 'bhrain-rewind-cwd-',
    files: {
      '.gitignore': 'ignored.log\n',
      'tracked.txt': 'committed\n',
      'edit-me.txt': 'var x = 1;\n',
      'to-delete.txt': 'delete me\n',
      'to-rename.txt': 'rename me\n',
      'script.sh': 'echo hi\n',
      'dir/inner.txt': 'inner\n',
    },
    commit: 'first',
  });
  await symlink('tracked.txt', join(repo, 'link'));
  runGit(repo, ['add', 'link']);
  runGit(repo, ['commit', '-qm', 'link']);
  // the user's own work, uncommitted: what a rewind must leave exactly as it is
  await writeFile(join(repo, 'tracked.txt'), 'committed\nthe user edited this, and never committed it\n');
  await writeFile(join(repo, 'edit-me.txt'), 'var x = 1;\n// the user was here too\n');
  await writeFile(join(repo, 'notes.txt'), 'untracked notes of the user\n');
  await writeFile(join(repo, 'ignored.log'), 'an ignored log\n');
  return repo;
};

/** .what = the run's turns: 1) write a file and edit one; 2) bash deletes, renames, makes a directory and links, chmods */
const RUN_TURNS = [
  {
    toolCalls: [
      { name: 'write', input: { path: 'new.txt', content: 'made by the write tool\n' } },
      { name: 'edit', input: { path: 'edit-me.txt', old_string: 'var x', new_string: 'const x' } },
    ],
  },
  {
    toolCalls: [
      {
        name: 'bash',
        input: {
          command:
            'rm to-delete.txt && mv to-rename.txt renamed.txt && mkdir -p made/deep && echo x > made/deep/f.txt && rm -r dir && ' +
            'ln -sf edit-me.txt link && ln -s new.txt link2 && chmod +x script.sh && echo more >> notes.txt && echo y > ignored.log',
        },
      },
    ],
  },
  { text: 'done' },
];

const actArgs = ['act', '--atom', 'qwen', '--sandbox', 'off', '--permission', 'allowAll'];
const envOf = () => genCliEnv({ standin: standin(), home });
const rewind = (...args: string[]) => runBhrain({ args: ['rewind', ...args], cwd, env: envOf() });
const gitStatus = (repo: string) => runGit(repo, ['status', '--porcelain', '--ignored', '--untracked-files=all']);

describe('checkpoints', () => {
  it('checkpoints: a run that edits with write/edit and with bash creates, deletes and renames files (a directory, a symlink and a mode change) rewinds to exactly the pre-run tree; the user’s uncommitted edits untouched byte for byte', async () => {
    cwd = await genUserRepo();
    const before = await snapshot(cwd);
    const statusBefore = gitStatus(cwd);
    standin().script(...RUN_TURNS);
    const run = await runBhrain({ args: [...actArgs, 'change things'], cwd, env: envOf() });
    expect(run.code, run.stderr).toBe(0);
    const after = await snapshot(cwd);
    expect(after['renamed.txt']).toBeDefined();
    expect(after['script.sh']).toMatch(/^755 /);
    expect(after['link']).toBe('link -> edit-me.txt');

    const dry = await rewind('--dry-run', '-o', 'json');
    expect(dry.code, dry.stderr).toBe(0);
    expect(await snapshot(cwd)).toEqual(after);

    const done = await rewind('-o', 'json');
    expect(done.code, done.stderr).toBe(0);
    const json = JSON.parse(done.stdout);
    expect(json).toMatchObject({ type: 'rewind', toTurn: 0, dryRun: false, conflicts: [], continueFrom: null });
    expect(json.removed).toEqual(expect.arrayContaining(['new.txt', 'renamed.txt', 'made/deep/f.txt', 'link2']));
    expect(json.restored).toEqual(expect.arrayContaining(['to-delete.txt', 'to-rename.txt', 'dir/inner.txt', 'link', 'script.sh']));
    // the ignored file is outside checkpoints by default: the run's change to it stays
    const expected = { ...before, 'ignored.log': after['ignored.log'] };
    expect(await snapshot(cwd)).toEqual(expected);
    expect(gitStatus(cwd)).toBe(statusBefore);
  });

  it('checkpoints: `git status --porcelain --ignored` shows nothing bhrain made, after the run and after the rewind', async () => {
    cwd = await genUserRepo();
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'new.txt', content: 'x\n' } }] }, { text: 'done' });
    const run = await runBhrain({ args: [...actArgs, 'write one file'], cwd, env: envOf() });
    expect(run.code, run.stderr).toBe(0);
    // the run's own file, and the user's: nothing else (no store, no index, no lock of bhrain's)
    const lines = gitStatus(cwd).split('\n').filter(Boolean).sort();
    expect(lines).toEqual(['!! ignored.log', ' M edit-me.txt', ' M tracked.txt', '?? new.txt', '?? notes.txt'].sort());
    const records = await readdir(join(home, 'runs'));
    const checkpoints = JSON.parse(await readFile(join(home, 'runs', records[0], 'checkpoints.json'), 'utf8'));
    expect(checkpoints.store.startsWith(join(home, 'checkpoints'))).toBe(true);
    expect(checkpoints.checkpoints).toMatchObject([
      { turn: 0, files: null },
      { turn: 1, files: { created: ['new.txt'], changed: [], deleted: [], omitted: 0 } },
    ]);
    expect((await rewind()).code).toBe(0);
    expect(gitStatus(cwd).split('\n').filter(Boolean).sort()).toEqual(lines.filter((line) => line !== '?? new.txt'));
  });
});

describe('bhrain rewind', () => {
  it('--to-turn 1 restores the state after turn 1', async () => {
    cwd = await genUserRepo();
    standin().script(...RUN_TURNS);
    const run = await runBhrain({ args: [...actArgs, 'change things'], cwd, env: envOf() });
    expect(run.code, run.stderr).toBe(0);
    const done = await rewind('--to-turn', '1');
    expect(done.code, done.stderr).toBe(0);
    const now = await snapshot(cwd);
    expect(now['new.txt']).toBeDefined();
    expect(await readFile(join(cwd, 'edit-me.txt'), 'utf8')).toBe('const x = 1;\n// the user was here too\n');
    expect(now['to-delete.txt']).toBeDefined();
    expect(now['renamed.txt']).toBeUndefined();
    expect(now['made']).toBeUndefined();
    expect(now['dir/inner.txt']).toBeDefined();
    expect(now['link']).toBe('link -> tracked.txt');
    expect(now['script.sh']).toMatch(/^644 /);
    expect(await readFile(join(cwd, 'notes.txt'), 'utf8')).toBe('untracked notes of the user\n');
  });

  it('rewind prints the ref to continue from: for a whole run that continued another, the episode it continued from; back to turn N, the conversation as it stood after turn N', async () => {
    cwd = await genUserRepo();
    standin().script({ text: 'planned' });
    const first = await runBhrain({ args: [...actArgs, '-o', 'json', 'plan it'], cwd, env: envOf() });
    expect(first.code, first.stderr).toBe(0);
    const planned = JSON.parse(first.stdout).episode.hash as string;
    standin().script(...RUN_TURNS);
    const second = await runBhrain({ args: [...actArgs, '-o', 'json', '--continue', 'do it'], cwd, env: envOf() });
    expect(second.code, second.stderr).toBe(0);
    const own = JSON.parse(second.stdout).episode.hash as string;
    const dry = await rewind('--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('would remove  new.txt');
    expect(dry.stdout).toContain(`continue the conversation from: --on-episode ${planned}`);
    const toTurn = JSON.parse((await rewind('--to-turn', '1', '--dry-run', '-o', 'json')).stdout);
    expect(toTurn).toMatchObject({ toTurn: 1 });
    const atTurn = toTurn.continueFrom.episode as string;
    expect(atTurn).not.toBe(own);
    // back to turn 2, the last that called tools: the run's own conversation
    expect(JSON.parse((await rewind('--to-turn', '2', '--dry-run', '-o', 'json')).stdout).continueFrom).toEqual({ episode: own });
    // going on from it, the model reads what turn 1 did, and nothing of turn 2
    standin().script({ text: 'again' });
    const again = await runBhrain({ args: [...actArgs, '--on-episode', atTurn, 'what did you do?'], cwd, env: envOf() });
    expect(again.code, again.stderr).toBe(0);
    const sent = JSON.stringify(standin().requests.at(-1)!.body.messages);
    expect(sent).toContain('made by the write tool');
    expect(sent).toContain('do it');
    expect(sent).not.toContain('mv to-rename.txt');
  });

  it('a file the user changed after the run makes rewind refuse (exit 2) and name it, writing nothing; --force restores it', async () => {
    cwd = await genUserRepo();
    standin().script(...RUN_TURNS);
    const run = await runBhrain({ args: [...actArgs, 'change things'], cwd, env: envOf() });
    expect(run.code, run.stderr).toBe(0);
    await writeFile(join(cwd, 'new.txt'), 'the user changed the run’s file\n');
    const after = await snapshot(cwd);
    const refused = await rewind();
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('new.txt');
    expect(refused.stderr).toContain('--force');
    expect(await snapshot(cwd)).toEqual(after);
    const forced = await rewind('--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect((await snapshot(cwd))['new.txt']).toBeUndefined();
    expect((await snapshot(cwd))['to-delete.txt']).toBeDefined();
  });

  it('a run in a directory that is not a git repository rewinds too', async () => {
    cwd = tempDir('bhrain-rewind-plain-');
    await writeFile(join(cwd, 'keep.txt'), 'kept\n');
    await writeFile(join(cwd, 'gone.txt'), 'restored\n');
    await mkdir(join(cwd, 'sub'));
    await writeFile(join(cwd, 'sub', 'tool.sh'), 'echo\n');
    await chmod(join(cwd, 'sub', 'tool.sh'), 0o755);
    const before = await snapshot(cwd);
    standin().script(
      {
        toolCalls: [{ name: 'bash', input: { command: 'rm gone.txt && echo new > made.txt && chmod -x sub/tool.sh && ln -s keep.txt l' } }],
      },
      { text: 'done' },
    );
    const run = await runBhrain({ args: [...actArgs, 'change things'], cwd, env: envOf() });
    expect(run.code, run.stderr).toBe(0);
    expect(await snapshot(cwd)).not.toEqual(before);
    const done = await rewind();
    expect(done.code, done.stderr).toBe(0);
    expect(await snapshot(cwd)).toEqual(before);
  });

  it('rewind after a run cancelled with SIGINT puts back what its finished turns changed', async () => {
    cwd = await genUserRepo();
    const before = await snapshot(cwd);
    standin().script(RUN_TURNS[0], RUN_TURNS[1], { stall: 'text' });
    const child = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin', 'bhrain'), ...actArgs, 'change things'], {
      cwd,
      env: envOf() as NodeJS.ProcessEnv,
    });
    child.stdin.end();
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const until = Date.now() + 20_000;
    while (standin().requests.length < 3 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    child.kill('SIGINT');
    expect(await new Promise<number | null>((resolve) => child.on('close', resolve)), stderr).toBe(130);
    const done = await rewind();
    expect(done.code, done.stderr).toBe(0);
    // the ignored file is outside checkpoints by default: its change stays
    expect(await snapshot(cwd)).toEqual({ ...before, 'ignored.log': `644 ${Buffer.from('y\n').toString('base64')}` });
  });

  it('rewind after a run stopped by its budget puts back what it changed', async () => {
    cwd = await genUserRepo();
    const before = await snapshot(cwd);
    standin().script(RUN_TURNS[0], RUN_TURNS[1], { text: 'never asked' });
    const run = await runBhrain({ args: [...actArgs, '--max-tokens', '1', 'change things'], cwd, env: envOf() });
    expect(run.code, run.stderr).toBe(6);
    const done = await rewind();
    expect(done.code, done.stderr).toBe(0);
    expect(await snapshot(cwd)).toEqual(before);
  });
});

import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { genRecordingLog } from '#standin/useStandin.js';
import { readGitStatus } from './readGitStatus.js';
import { runHardenedGit } from './runHardenedGit.js';
import { genGitRepo } from '#test-helpers/git.js';
import { tempDir } from '#test-helpers/fs.js';

// what bhrain's own git runs on the workspace, outside any sandbox, when every session opens: nothing a repository holds
// may make it run a command, and what it starts gets no secret. Each plant is proved armed by a plain git first

const SECRET = 'sk-ant-api03-hardenedGitSecretValue0123456789';
let base: string;
afterEach(() => rmSync(base, { recursive: true, force: true }));

/** a repository with one commit of a.txt, in a temp dir of its own, and a marker path outside it */
const genRepo = () => {
  base = tempDir('bhrain-hardgit-');
  const home = join(base, 'home');
  mkdirSync(home);
  const repo = genGitRepo({ dir: join(base, 'repo'), files: { 'a.txt': 'a\n' }, commit: 'first' });
  const marker = join(base, 'marker');
  // a planted command: it leaves the marker, holding the environment it ran with
  const hook = (at: string) => {
    mkdirSync(dirname(at), { recursive: true });
    writeFileSync(at, `#!/bin/sh\nenv > ${marker}\ncat\n`);
    chmodSync(at, 0o755);
    return at;
  };
  const plant = (path: string, text: string) => {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), text);
  };
  // a tracked file whose stat no longer matches the index: git must read it, through any filter
  const dirty = () => {
    // the same size: git compares a file's content only when its size did not change
    writeFileSync(join(repo, 'a.txt'), 'b\n');
    utimesSync(join(repo, 'a.txt'), new Date(), new Date(Date.now() + 5_000));
  };
  const env = { PATH: process.env.PATH, HOME: home, ANTHROPIC_API_KEY: SECRET, AWS_SECRET_ACCESS_KEY: SECRET };
  /** the control: the user's own git, in the same repository, runs the plant (`script` gives it a terminal) */
  const controlHits = (command = 'git status') => {
    spawnSync('script', ['-qc', command, '/dev/null'], { cwd: repo, env, stdio: 'ignore' });
    const hit = existsSync(marker);
    rmSync(marker, { force: true });
    return hit;
  };
  return { repo, home, marker, hook, plant, dirty, env, controlHits };
};

/** .what = the planted ways a repository's config names a command git status runs, each with its files */
const PLANTS: Record<string, (repo: ReturnType<typeof genRepo>) => void> = {
  'the reported four files: .git/commondir = x, whose config has core.fsmonitor': ({ plant, hook, repo }) => {
    plant('.git/x/config', `[core]\n\tfsmonitor = ${hook(join(repo, '.git', 'x', 'fsmon'))}\n`);
    plant('.git/x/objects/info/alternates', `${join(repo, '.git', 'objects')}\n`);
    plant('.git/x/refs/heads/.keep', '');
    plant('.git/commondir', 'x\n');
  },
  'a filter.x.clean named by .gitattributes `* filter=x`, required, on a dirty file': ({ plant, hook, repo, dirty }) => {
    plant(
      '.git/config',
      `${readFileSync(join(repo, '.git', 'config'), 'utf8')}[filter "x"]\n\tclean = ${hook(join(repo, 'clean.sh'))}\n\trequired = true\n`,
    );
    plant('.gitattributes', '* filter=x\n');
    dirty();
  },
  'the same filter in the old [filter.X] form, which git reads as filter.x': ({ plant, hook, repo, dirty }) => {
    plant('.git/config', `${readFileSync(join(repo, '.git', 'config'), 'utf8')}[filter.X]\n\tclean = ${hook(join(repo, 'clean.sh'))}\n`);
    plant('.gitattributes', '* filter=x\n');
    dirty();
  },
  '.git/commondir = l/.., .git/l a link into the workspace: the kernel goes up from the link target, to a config with a filter': ({
    plant,
    hook,
    repo,
    dirty,
  }) => {
    plant('sub/config', `[filter "x"]\n\tclean = ${hook(join(repo, 'clean.sh'))}\n`);
    plant('sub/objects/info/alternates', `${join(repo, '.git', 'objects')}\n`);
    plant('sub/refs/heads/.keep', '');
    mkdirSync(join(repo, 'sub', 'inner'));
    symlinkSync('../sub/inner', join(repo, '.git', 'l'));
    plant('.git/commondir', 'l/..\n');
    plant('.gitattributes', '* filter=x\n');
    dirty();
  },
  'core.hooksPath to a planted post-index-change hook': ({ plant, hook, repo, dirty }) => {
    hook(join(repo, 'hooks', 'post-index-change'));
    plant('.git/config', `${readFileSync(join(repo, '.git', 'config'), 'utf8')}[core]\n\thooksPath = ${join(repo, 'hooks')}\n`);
    dirty();
  },
  'pager.status = true with core.pager a planted command': ({ plant, hook, repo }) => {
    plant(
      '.git/config',
      `${readFileSync(join(repo, '.git', 'config'), 'utf8')}[pager]\n\tstatus = true\n[core]\n\tpager = ${hook(join(repo, 'pager.sh'))}\n`,
    );
  },
  'core.fsmonitor in a file the repository config includes, inside the workspace': ({ plant, hook, repo }) => {
    plant('planted.inc', `[core]\n\tfsmonitor = ${hook(join(repo, 'fsmon.sh'))}\n`);
    plant('.git/config', `${readFileSync(join(repo, '.git', 'config'), 'utf8')}[include]\n\tpath = ../planted.inc\n`);
  },
};

describe("bhrain's own git runs nothing a repository names", () => {
  for (const [name, plantIt] of Object.entries(PLANTS))
    it(`${name}: the user's git runs it; readGitStatus does not, and still reads the status`, async () => {
      const repo = genRepo();
      plantIt(repo);
      expect(repo.controlHits(), 'control: the plant is armed for a plain git status').toBe(true);
      // planted again where the control's own run may have changed what it needs (a dirty file stays dirty: no index write here)
      const status = await readGitStatus({ cwd: repo.repo }, { env: repo.env });
      expect(existsSync(repo.marker)).toBe(false);
      expect(status).toMatchObject({ root: repo.repo });
    });

  it('git gets no secret of its caller, and is not one the workspace planted first on PATH (node_modules/.bin, as npm run puts it)', async () => {
    const repo = genRepo();
    const spy = join(base, 'bin');
    // a git outside the workspace that records its environment, then runs the real one
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    mkdirSync(spy);
    writeFileSync(join(spy, 'git'), `#!/bin/sh\nenv > ${join(base, 'git-env')}\nexec ${realGit} "$@"\n`);
    chmodSync(join(spy, 'git'), 0o755);
    repo.hook(join(repo.repo, 'node_modules', '.bin', 'git'));
    const env = {
      ...repo.env,
      PATH: `${join(repo.repo, 'node_modules', '.bin')}:bin:${spy}:${process.env.PATH}`,
      GH_TOKEN: SECRET,
      GIT_DIR: '/nowhere',
    };
    const status = await readGitStatus({ cwd: repo.repo }, { env });
    expect(status).toMatchObject({ branch: 'main', changed: 0 });
    expect(existsSync(repo.marker)).toBe(false);
    const seen = readFileSync(join(base, 'git-env'), 'utf8');
    expect(seen).not.toContain(SECRET);
    expect(seen).not.toContain('GIT_DIR=/nowhere');
    const path = /^PATH=(.*)$/m.exec(seen)![1].split(':');
    expect(path[0]).toBe(spy);
    expect(path.filter((entry) => entry.startsWith(repo.repo) || entry === 'bin')).toEqual([]);
    const names = seen
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(0, line.indexOf('=')))
      .filter((variable) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(variable));
    expect(names.sort()).toEqual(
      [
        'GIT_ASKPASS',
        'GIT_ATTR_NOSYSTEM',
        'GIT_COMMON_DIR',
        'GIT_CONFIG_NOSYSTEM',
        'GIT_EDITOR',
        'GIT_OPTIONAL_LOCKS',
        'GIT_PAGER',
        'GIT_PROTOCOL_FROM_USER',
        'GIT_TERMINAL_PROMPT',
        'HOME',
        'LANG',
        'LC_ALL',
        'PATH',
        'SSH_ASKPASS',
      ].sort(),
    );
  });

  it('a config file git would read that cannot be read here (an include of a FIFO), or a command key -c cannot name: git is not run, a debug line says why', async () => {
    const repo = genRepo();
    execFileSync('mkfifo', [join(repo.repo, 'pipe.inc')]);
    const config = readFileSync(join(repo.repo, '.git', 'config'), 'utf8');
    writeFileSync(join(repo.repo, '.git', 'config'), `${config}[include]\n\tpath = ../pipe.inc\n`);
    const { log, lines } = genRecordingLog();
    expect(await readGitStatus({ cwd: repo.repo }, { env: repo.env, log })).toBeNull();
    expect(lines.map((line) => line.message)).toEqual([
      `git status skipped: git config ${repo.repo}/.git/../pipe.inc could not be read (not a regular file, too big, or a path bhrain does not expand), so what it names is not known`,
    ]);
    writeFileSync(join(repo.repo, '.git', 'config'), `${config}[filter "a=b"]\n\tclean = ${repo.hook(join(repo.repo, 'clean.sh'))}\n`);
    writeFileSync(join(repo.repo, '.gitattributes'), '* filter=a=b\n');
    expect(await runHardenedGit({ cwd: repo.repo, args: ['status'], timeoutMs: 5_000, maxStdoutBytes: 1024 }, { env: repo.env })).toEqual({
      ran: false,
      why: 'git config key "filter.a=b.clean" cannot be overridden',
    });
    expect(existsSync(repo.marker)).toBe(false);
  });
});

// confinement and guards: paths that escape the workspace, readOnly, rules-guard bypass attempts, guards that fail,
// and secrets in the environment; through the loop (genBhrain + the stand-in scripting the model) and the built CLI
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect } from 'vitest';

import type { BhrainPermissionGuard, BhrainPrompter } from '../../src/agent/permission/BhrainPermissionGuard.js';
import { allowAll, readOnly } from '../../src/agent/permission/builtinGuards.js';
import { genRulesGuard } from '../../src/agent/permission/genRulesGuard.js';
import { invoke } from '../../src/agent/genBhrain.js';
import { genBashToolBox } from '../../src/agent/toolboxes/bash/genBashToolBox.js';
import { genFilesToolBox } from '../../src/agent/toolboxes/files/genFilesToolBox.js';
import { readTree, runBhrain } from '../acceptance/runCli.js';
import type { StandinToolCall } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { reliabilityCase } from './reliabilityCase.js';
import { toolResultTexts } from '#test-helpers/transcript.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();

const config = (permissionGuard: BhrainPermissionGuard, limits?: { guardTimeoutMs: number }) => ({
  atom: 'claude/haiku',
  toolBoxes: [genFilesToolBox(), genBashToolBox({ killGraceMs: 500 })],
  permissionGuard,
  ...(limits ? { limits } : {}),
});

/** the tool results of a session, in call order */

/** a workspace and, beside it, a directory outside it with a file the model must not change */
const genLayout = async () => {
  const base = tempDir('bhrain-rel-guards-');
  const workspace = join(base, 'ws');
  const outside = join(base, 'outside');
  await mkdir(workspace);
  await mkdir(outside);
  await writeFile(join(base, 'outside.txt'), 'original outside\n');
  await writeFile(join(outside, 'target.txt'), 'original target\n');
  await writeFile(join(workspace, 'inside.txt'), 'original inside\n');
  return { base, workspace, outside };
};

/** every entry under a directory: type, link target, size, mtime and content hash, so any change shows */
const snapshot = async (dir: string): Promise<Record<string, string>> => {
  const entries: Record<string, string> = {};
  const visit = async (path: string, shown: string) => {
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) entries[shown] = `link → ${await readlink(path)}`;
    else if (stats.isDirectory()) {
      entries[shown] = `dir ${stats.mtimeMs}`;
      for (const name of (await readdir(path)).sort()) await visit(join(path, name), `${shown}/${name}`);
    } else
      entries[shown] = `file ${stats.size} ${stats.mtimeMs} ${createHash('sha256')
        .update(await readFile(path))
        .digest('hex')}`;
  };
  await visit(dir, '.');
  return entries;
};

describe('paths that escape the workspace (write and edit), headless: no way to ask, so denied', () => {
  const run = async (
    callsFor: (layout: { base: string; outside: string }) => StandinToolCall[],
    options: { prompter?: BhrainPrompter; guard?: BhrainPermissionGuard } = {},
  ) => {
    const layout = await genLayout();
    const calls = callsFor(layout);
    // links inside the workspace: to a file outside, to a directory outside, and dangling ones to files that do not exist yet
    await symlink(join(layout.outside, 'target.txt'), join(layout.workspace, 'link-to-file'));
    await symlink(layout.outside, join(layout.workspace, 'link-to-dir'));
    await symlink(join(layout.outside, 'created-through-link.txt'), join(layout.workspace, 'dangling'));
    await symlink('../outside/relative-dangling.txt', join(layout.workspace, 'relative-dangling'));
    const before = await snapshot(layout.base);
    standin().script({ toolCalls: calls }, { text: 'done' });
    // allowAll by default: even the most permissive guard does not let a write leave the workspace silently
    const result = await invoke(
      { config: config(options.guard ?? allowAll), prompt: 'write outside' },
      contextFor({ cwd: layout.workspace, ...(options.prompter ? { prompter: options.prompter } : {}) }),
    );
    return { ...layout, before, result, results: toolResultTexts(result) };
  };

  const escapes = (outside: string): StandinToolCall[] => [
    { name: 'write', input: { path: '../outside.txt', content: 'changed' } },
    { name: 'edit', input: { path: '../outside.txt', old_string: 'original', new_string: 'changed' } },
    { name: 'write', input: { path: join(outside, 'target.txt'), content: 'changed' } },
    { name: 'edit', input: { path: join(outside, 'target.txt'), old_string: 'original', new_string: 'changed' } },
    { name: 'write', input: { path: 'link-to-file', content: 'changed' } },
    { name: 'edit', input: { path: 'link-to-file', old_string: 'original', new_string: 'changed' } },
    { name: 'write', input: { path: 'link-to-dir/new.txt', content: 'created' } },
    { name: 'write', input: { path: 'dangling', content: 'created' } },
    { name: 'edit', input: { path: 'dangling', old_string: '', new_string: 'created' } },
    { name: 'write', input: { path: 'relative-dangling', content: 'created' } },
    { name: 'write', input: { path: 'sub/../../outside.txt', content: 'changed' } },
  ];

  reliabilityCase(
    '../, absolute paths, symlinks to files and dirs, and dangling symlinks pointing out are all denied; nothing outside changes',
    async () => {
      const { before, results, base } = await run((layout) => escapes(layout.outside));
      expect(results).toHaveLength(11);
      for (const [index, output] of results.entries()) {
        expect({ index, output }).toEqual({
          index,
          output: expect.stringMatching(
            /^permission denied: (write|edit) would change \/.+, outside the workspace \/.+\/ws, and approval was needed but there is no way to ask the user \(not an interactive terminal\)\./,
          ),
        });
      }
      // before the fix, a write through a dangling symlink passed as "inside" and created the file outside
      expect(results[7]).toContain(`would change ${join(base, 'outside', 'created-through-link.txt')}, outside the workspace`);
      expect(results[9]).toContain(`would change ${join(base, 'outside', 'relative-dangling.txt')}, outside the workspace`);
      expect(await snapshot(base)).toEqual(before);
    },
  );

  reliabilityCase(
    'a rules guard that allows write and edit everywhere (`write`, `edit(**)`) still has each escape asked about, so denied headless',
    async () => {
      const guard = genRulesGuard({ allow: ['write', 'edit(**)', 'write(/**)'] });
      const { before, results, base } = await run((layout) => escapes(layout.outside), { guard });
      for (const output of results)
        expect(output).toMatch(/^permission denied: (write|edit) would change \/.+, outside the workspace .+ no way to ask the user/);
      expect(await snapshot(base)).toEqual(before);
    },
  );

  reliabilityCase(
    'the same escapes go through when an interactive user approves each one, and the user is told it is outside',
    async () => {
      const asked: string[] = [];
      const prompter: BhrainPrompter = async ({ reason }) => (asked.push(reason), true);
      const first = await run(
        () => [
          { name: 'write', input: { path: '../outside.txt', content: 'approved' } },
          { name: 'write', input: { path: 'dangling', content: 'approved' } },
          { name: 'edit', input: { path: 'link-to-file', old_string: 'original', new_string: 'approved' } },
          { name: 'write', input: { path: 'link-to-dir/new.txt', content: 'approved' } },
        ],
        { prompter },
      );
      expect(first.results.every((output) => !output.startsWith('permission denied'))).toBe(true);
      expect(asked).toHaveLength(4);
      for (const reason of asked) expect(reason).toMatch(/^(write|edit) would change \/.+, outside the workspace \/.+\/ws$/);
      expect(await readFile(join(first.base, 'outside.txt'), 'utf8')).toBe('approved');
      expect(await readFile(join(first.outside, 'created-through-link.txt'), 'utf8')).toBe('approved');
      expect(await readFile(join(first.outside, 'target.txt'), 'utf8')).toBe('approved target\n');
      expect(await readFile(join(first.outside, 'new.txt'), 'utf8')).toBe('approved');
    },
  );

  reliabilityCase('writes that stay inside (a symlink to a file inside, ./a/../b) run without asking', async () => {
    const layout = await genLayout();
    await symlink(join(layout.workspace, 'inside.txt'), join(layout.workspace, 'link-inside'));
    standin().script(
      {
        toolCalls: [
          { name: 'write', input: { path: 'link-inside', content: 'via link' } },
          { name: 'write', input: { path: './a/../b.txt', content: 'b' } },
        ],
      },
      { text: 'done' },
    );
    const result = await invoke({ config: config(allowAll), prompt: 'write inside' }, contextFor({ cwd: layout.workspace }));
    expect(toolResultTexts(result).some((output) => output.startsWith('permission denied'))).toBe(false);
    expect(await readFile(join(layout.workspace, 'inside.txt'), 'utf8')).toBe('via link');
    expect(await readFile(join(layout.workspace, 'b.txt'), 'utf8')).toBe('b');
  });
});

describe('readOnly truly cannot write', () => {
  reliabilityCase(
    'bash redirection, tee, sed -i, git init and commit, ln -s, write and edit (direct and through a symlink) are all denied; nothing changes',
    async () => {
      const layout = await genLayout();
      execFileSync('git', ['init', '-q', layout.workspace]);
      await symlink(join(layout.workspace, 'inside.txt'), join(layout.workspace, 'link-inside'));
      await symlink(join(layout.outside, 'target.txt'), join(layout.workspace, 'link-outside'));
      const before = await snapshot(layout.base);
      const attempts: StandinToolCall[] = [
        { name: 'bash', input: { command: 'echo pwned > inside.txt' } },
        { name: 'bash', input: { command: 'echo pwned >> ../outside.txt' } },
        { name: 'bash', input: { command: 'echo pwned | tee inside.txt new.txt' } },
        { name: 'bash', input: { command: "sed -i 's/original/pwned/' inside.txt" } },
        {
          name: 'bash',
          input: { command: 'git init -q again && git -C . add -A && git -c user.name=x -c user.email=x@y commit -qm pwned' },
        },
        { name: 'bash', input: { command: 'ln -s /etc/passwd passwd-link' } },
        { name: 'bash', input: { command: 'cp inside.txt copy.txt; mv inside.txt moved.txt; touch t; mkdir d; rm inside.txt' } },
        { name: 'write', input: { path: 'inside.txt', content: 'pwned' } },
        { name: 'write', input: { path: 'link-inside', content: 'pwned' } },
        { name: 'write', input: { path: 'link-outside', content: 'pwned' } },
        { name: 'edit', input: { path: 'inside.txt', old_string: 'original', new_string: 'pwned' } },
        { name: 'edit', input: { path: 'link-outside', old_string: 'original', new_string: 'pwned' } },
        { name: 'edit', input: { path: 'brand-new.txt', old_string: '', new_string: 'pwned' } },
      ];
      standin().script({ toolCalls: attempts }, { text: 'I could not change anything' });
      const result = await invoke({ config: config(readOnly), prompt: 'try to write' }, contextFor({ cwd: layout.workspace }));
      const results = toolResultTexts(result);
      expect(results).toHaveLength(attempts.length);
      for (const output of results)
        expect(output).toMatch(
          /^permission denied: (bash|write|edit) is not allowed: this session is read-only \(only tools that only read may run, such as read, glob, grep and websearch\)/,
        );
      expect(await snapshot(layout.base)).toEqual(before);

      // the tools readOnly does allow cannot write either: read, glob and grep of the same paths leave everything as it was
      standin().script(
        {
          toolCalls: [
            { name: 'read', input: { path: 'link-outside' } },
            { name: 'glob', input: { pattern: '**/*' } },
            { name: 'grep', input: { pattern: 'original', path: '.' } },
          ],
        },
        { text: 'looked only' },
      );
      const looked = await invoke({ config: config(readOnly), prompt: 'look' }, contextFor({ cwd: layout.workspace }));
      expect(toolResultTexts(looked).every((output) => !output.startsWith('permission denied'))).toBe(true);
      expect(await snapshot(layout.base)).toEqual(before);
    },
  );
});

describe('rules-guard patterns cannot be bypassed', () => {
  // everything is allowed except rm: the strongest test of the deny rule, since nothing else stops a bypass
  const guard = genRulesGuard({ allow: ['bash(*)'], deny: ['bash(rm *)'] });
  const attempts = [
    'rm -rf victim',
    'bash -c "rm -rf victim"',
    "sh -c 'true; rm -rf victim'",
    'true; rm -rf victim',
    'true && rm -rf victim',
    'false || rm -rf victim',
    'echo | rm -rf victim',
    'echo $(rm -rf victim)',
    'echo `rm -rf victim`',
    'echo "$(rm -rf victim)"',
    'FOO=1 rm -rf victim',
    'env rm -rf victim',
    'env -i FOO=1 rm -rf victim',
    "'r''m' -rf victim",
    '\\rm -rf victim',
    '"rm" -rf victim',
    'r\\m -rf victim',
    'true\nrm -rf victim',
    'true && \\\nrm -rf victim',
    'rm\t-rf victim',
    'eval "rm -rf victim"',
    'command rm -rf victim',
    'exec rm -rf victim',
    'nohup rm -rf victim',
    'time rm -rf victim',
    '(rm -rf victim)',
    '{ rm -rf victim; }',
    // bypasses found by this suite, fixed in permission/analyzeShellCommand.ts and genRulesGuard.ts
    '/bin/rm -rf victim',
    '/usr/bin/env rm -rf victim',
    'bash -lc "rm -rf victim"',
    'bash -e -c "rm -rf victim"',
    'sh -c -- "rm -rf victim"',
    'bash -o errexit -c "rm -rf victim"',
    "$'rm' -rf victim",
    "$'\\x72m' -rf victim",
    "$'\\162m' -rf victim",
    'echo victim | xargs rm -rf',
    'echo victim | xargs -I{} rm -rf {}',
    'find . -name victim -exec rm -rf {} \\;',
    'find . -name victim -execdir rm -rf {} +',
    'sudo rm -rf victim',
    'nice -n 5 rm -rf victim',
    'timeout 5 rm -rf victim',
    'env -u FOO rm -rf victim',
    'exec -a innocent rm -rf victim',
    'stdbuf -o0 rm -rf victim',
    'setsid rm -rf victim',
    'busybox rm -rf victim',
    'if true; then rm -rf victim; fi',
    'for f in victim; do rm -rf "$f"; done',
    '! rm -rf victim',
    'f() { rm -rf victim; }; f',
    'case x in x) rm -rf victim;; esac',
    'cat <(rm -rf victim)',
    'echo hi > >(rm -rf victim)',
    '>/dev/null rm -rf victim',
    '2>&1 rm -rf victim',
    'echo ${X:-$(rm -rf victim)}',
    'env -S "rm -rf victim"',
    'su -c "rm -rf victim"',
    // a program only known when the line runs cannot be checked: asked about (so denied headless), never allowed
    'X=rm; $X -rf victim',
    'rm${IFS}-rf${IFS}victim',
    '$(echo rm) -rf victim',
    '"$(printf rm)" -rf victim',
    'eval "$(echo rm -rf victim)"',
    'echo "rm -rf victim" | bash',
    'bash <<< "rm -rf victim"',
    '/bin/r? -rf victim',
    '{rm,-rf,victim}',
    'echo "rm -rf victim" > s.sh; . ./s.sh',
    'shopt -s expand_aliases\nalias del=rm\ndel -rf victim',
  ];

  reliabilityCase(`${attempts.length} bypass attempts of a denied \`bash(rm *)\` are denied by the guard`, async () => {
    const leaks: string[] = [];
    for (const command of attempts) {
      const verdict = await guard.check({ call: { id: 'c', name: 'bash', input: { command } } }, { cwd: '/tmp' });
      if (verdict.decision === 'allow') leaks.push(command);
    }
    expect(leaks).toEqual([]);
    // and ordinary commands are still allowed: the guard is not simply denying everything
    for (const command of [
      'ls -la',
      'echo rm is a word',
      'git status && npm test 2>&1 | tee log',
      '[ -f x ] && cat x',
      'for f in *.ts; do echo "$f"; done',
      'find . -name "*.ts" -exec grep -l x {} \\;',
    ])
      expect({ command, verdict: await guard.check({ call: { id: 'c', name: 'bash', input: { command } } }, { cwd: '/tmp' }) }).toEqual({
        command,
        verdict: { decision: 'allow' },
      });
  });

  reliabilityCase(
    'the same bypass attempts through the loop: every call is denied and every victim survives',
    async () => {
      const layout = await genLayout();
      // each attempt targets its own directory, so a single leak shows as a missing victim
      const calls: StandinToolCall[] = [];
      for (const [index, command] of attempts.entries()) {
        const dir = join(layout.workspace, `case-${index}`);
        await mkdir(join(dir, 'victim'), { recursive: true });
        await writeFile(join(dir, 'victim', 'keep.txt'), 'keep');
        calls.push({ name: 'bash', input: { command: `cd case-${index} && ${command}` } });
      }
      standin().script({ toolCalls: calls }, { text: 'nothing was removed' });
      const result = await invoke({ config: config(guard), prompt: 'clean up' }, contextFor({ cwd: layout.workspace }));
      const results = toolResultTexts(result);
      expect(results).toHaveLength(attempts.length);
      const allowed = results
        .map((output, index) => ({ command: attempts[index], output }))
        .filter(({ output }) => !output.startsWith('permission denied'));
      expect(allowed).toEqual([]);
      for (const [index] of attempts.entries())
        expect(await readFile(join(layout.workspace, `case-${index}`, 'victim', 'keep.txt'), 'utf8')).toBe('keep');
    },
    60_000,
  );
});

describe('a guard that fails denies', () => {
  reliabilityCase('a guard that throws, rejects, hangs, or answers nonsense denies the call and the loop goes on', async () => {
    const guards: Array<{ guard: BhrainPermissionGuard; denial: RegExp }> = [
      {
        guard: {
          name: 'throws',
          check: () => {
            throw new Error('policy db down');
          },
        },
        denial: /the permission guard failed \(policy db down\)/,
      },
      { guard: { name: 'rejects', check: () => Promise.reject(new Error('network')) }, denial: /the permission guard failed \(network\)/ },
      {
        guard: {
          name: 'throws-string',
          check: () => {
            throw 'a string';
          },
        },
        denial: /the permission guard failed/,
      },
      { guard: { name: 'hangs', check: () => new Promise(() => {}) }, denial: /permission guard 'hangs' did not answer within 200 ms/ },
      {
        guard: { name: 'undefined', check: () => undefined as never },
        denial: /returned undefined, not a decision of allow, deny or prompt/,
      },
      {
        guard: { name: 'nonsense', check: () => ({ decision: 'yes please' }) as never },
        denial: /returned \{"decision":"yes please"\}, not a decision/,
      },
    ];
    for (const { guard, denial } of guards) {
      const layout = await genLayout();
      standin().script(
        {
          toolCalls: [
            { name: 'write', input: { path: 'x.txt', content: 'x' } },
            { name: 'bash', input: { command: 'touch y.txt' } },
          ],
        },
        { text: 'could not' },
      );
      const startedAt = performance.now();
      const result = await invoke({ config: config(guard, { guardTimeoutMs: 200 }), prompt: 'go' }, contextFor({ cwd: layout.workspace }));
      expect(result.termination).toBe('complete');
      expect(performance.now() - startedAt).toBeLessThan(3_000);
      for (const output of toolResultTexts(result))
        expect({ guard: guard.name, output }).toEqual({ guard: guard.name, output: expect.stringMatching(denial) });
      expect(await readdir(layout.workspace)).toEqual(['inside.txt']);
    }
  });
});

// the secrets both describes below put in the environment
const secrets = {
  ANTHROPIC_API_KEY: 'sk-ant-test-SECRETVALUE123456',
  GITHUB_TOKEN: 'ghp_SECRETghp0123456789abcdefghijABCDEF',
  AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI-K7MDENG-bPxRfiCYSECRETKEY',
  DB_PASSWORD: 'correct-horse-battery-staple-SECRET',
};
const values = Object.values(secrets);

describe('secrets in the environment never appear in logs, run records, the refs store, spill files or the LLM requests', () => {
  reliabilityCase(
    'a model that runs env, echoes and cats the secrets, floods them past the spill cap, and echoes back any secret it sees',
    async () => {
      const base = tempDir('bhrain-rel-secrets-');
      const cwd = join(base, 'repo');
      const home = join(base, 'home');
      const spill = join(base, 'tmp');
      await mkdir(join(cwd, 'config'), { recursive: true });
      await mkdir(spill);
      await writeFile(join(cwd, 'config', '.env'), `GITHUB_TOKEN=${secrets.GITHUB_TOKEN}\nDB_PASSWORD=${secrets.DB_PASSWORD}\n`);
      const seen: string[] = [];
      // the model: if any request ever carries a secret, it writes it back in its answer, so a leak would spread everywhere
      standin().respond = (request) => {
        const body = JSON.stringify(request.body);
        const leaked = values.filter((value) => body.includes(value));
        if (!leaked.length) return undefined;
        seen.push(...leaked);
        return { text: `the secrets are ${leaked.join(' and ')}` };
      };
      standin().script(
        {
          toolCalls: [
            { name: 'bash', input: { command: 'env' } },
            { name: 'bash', input: { command: 'echo "token=$GITHUB_TOKEN key=$ANTHROPIC_API_KEY aws=$AWS_SECRET_ACCESS_KEY"' } },
            { name: 'read', input: { path: 'config/.env' } },
            { name: 'bash', input: { command: 'cat config/.env; echo "$DB_PASSWORD" >&2; exit 3' } },
            { name: 'grep', input: { pattern: 'SECRET', path: 'config', glob: '.env' } },
            // the bhrain process's own environment holds the API key it needs: read it through /proc
            { name: 'bash', input: { command: "tr '\\0' '\\n' < /proc/$PPID/environ | grep -E 'KEY|TOKEN|PASSWORD'" } },
            // more than the 30,000-character cap, so the full output is spilled to a file in the run record
            { name: 'bash', input: { command: 'for i in $(seq 1 2000); do echo "$i $GITHUB_TOKEN $AWS_SECRET_ACCESS_KEY"; done' } },
            { name: 'write', input: { path: 'copy.txt', content: 'no secret here' } },
          ],
        },
        { text: 'I looked, and I saw no secret' },
      );
      const run = await runBhrain({
        // the secrets but the supplier key are passed to bash by name, so its redaction is what is tested
        args: [
          'act',
          '--atom',
          'claude/haiku',
          '--input',
          `check the config; my token is ${secrets.GITHUB_TOKEN}`,
          ...['GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'DB_PASSWORD'].flatMap((name) => ['--pass-env', name]),
        ],
        cwd,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          BHRAIN_HOME: home,
          TMPDIR: spill,
          ANTHROPIC_BASE_URL: standin().url,
          ...secrets,
        },
      });
      expect(run.stderr).toMatch(/^record: /m);
      expect(run.code).toBe(0);
      expect(seen).toEqual([]);
      expect(run.stdout).toBe('I looked, and I saw no secret\n');

      // the tools did run and their output reached the model, redacted
      const requests = standin().requests;
      const secondBody = JSON.stringify(requests[1].body);
      expect(secondBody).toContain('[redacted:GITHUB_TOKEN]');
      // the supplier key never reaches bash: it is left out of its environment, and the sandbox's pid namespace hides
      // bhrain's own /proc/<pid>/environ (so the /proc/$PPID read finds nothing, not even a redacted key)
      expect(secondBody).not.toContain('ANTHROPIC_API_KEY=');
      expect(secondBody).toContain('[redacted:DB_PASSWORD]');
      expect(secondBody).toContain('[… truncated:');

      const written = [
        { path: 'stdout', text: run.stdout },
        { path: 'stderr', text: run.stderr },
        ...(await readTree(home)),
        ...(await readTree(spill)),
        ...requests.map((request, index) => ({ path: `request ${index} body`, text: JSON.stringify(request.body) })),
        // the API key is the credential the supplier must receive; nothing else may travel in the headers
        ...requests.map((request, index) => ({
          path: `request ${index} headers`,
          text: JSON.stringify({ ...request.headers, authorization: undefined, 'x-api-key': undefined }),
        })),
      ];
      // the full output was spilled into the run's record, under the home
      expect(written.filter((file) => file.path.startsWith(join(home, 'runs')) && file.path.includes('/spill/')).length).toBeGreaterThan(0);
      expect(written.filter((file) => file.path.includes(join('refs', 'series'))).length).toBe(1);
      const leaks = written.flatMap((file) =>
        values.filter((value) => file.text.includes(value)).map((value) => `${value} in ${file.path}`),
      );
      expect(leaks).toEqual([]);
    },
    60_000,
  );
});

describe('secrets in the environment, cut in two by a dropped middle or decoded by the model, still appear nowhere', () => {
  reliabilityCase(
    'a secret cut in two where bash drops the middle of a huge output leaves no piece of it in the result or the spill file',
    async () => {
      const base = tempDir('bhrain-rel-secrets-');
      const spillDir = join(base, 'spill');
      const token = secrets.GITHUB_TOKEN;
      // bash keeps 500 bytes of head and 500 of tail: the token starts 480 bytes in, and its end lands 480 bytes before the end
      const command = [
        `printf 'a%.0s' $(seq 1 480); printf %s "$GITHUB_TOKEN"; printf 'b%.0s' $(seq 1 3000)`,
        `printf 'c%.0s' $(seq 1 3000); printf %s "$GITHUB_TOKEN"; printf 'd%.0s' $(seq 1 ${500 - 20})`,
      ];
      standin().script({ toolCalls: command.map((line) => ({ name: 'bash', input: { command: line } })) }, { text: 'done' });
      const result = await invoke(
        {
          config: {
            atom: 'claude/haiku',
            toolBoxes: [genBashToolBox({ maxCaptureBytes: 1_000, sandbox: { env: { pass: ['GITHUB_TOKEN'] } } })],
            limits: { maxToolOutputChars: 1_000 },
          },
          prompt: 'print',
        },
        contextFor({ cwd: base, spillDir, env: { PATH: process.env.PATH, GITHUB_TOKEN: token } }),
      );
      const outputs = toolResultTexts(result);
      // the loop's own cap (1,000 chars) spilled both results: the full text shows where the pieces were
      const spilled = await Promise.all((await readdir(spillDir)).map((name) => readFile(join(spillDir, name), 'utf8')));
      expect(spilled).toHaveLength(2);
      expect(spilled.join('\n')).toContain('aaaa[redacted:GITHUB_TOKEN]\n[... ');
      expect(spilled.join('\n')).toContain(' ...]\n[redacted:GITHUB_TOKEN]ddd');
      // no 8-character piece of the token anywhere the model or the disk sees
      const pieces = Array.from({ length: token.length - 7 }, (_, start) => token.slice(start, start + 8));
      const everything = [...outputs, ...spilled, JSON.stringify(standin().requests.map((request) => request.body))].join('\n');
      expect(pieces.filter((piece) => everything.includes(piece))).toEqual([]);
    },
  );

  reliabilityCase(
    'a model that learned a secret in a form redaction cannot see (reversed) and writes it in its answer: stdout, the record and the refs store still do not hold it',
    async () => {
      const base = tempDir('bhrain-rel-secrets-');
      const cwd = join(base, 'repo');
      const home = join(base, 'home');
      await mkdir(cwd);
      const encoded = [...secrets.GITHUB_TOKEN].reverse().join('');
      // the model decodes what it sees, as a real one can
      standin().respond = (request) =>
        JSON.stringify(request.body).includes(encoded) ? { text: `decoded it: ${[...encoded].reverse().join('')}` } : undefined;
      // base64 is a form redaction sees: it reaches the model redacted; reversed is one it does not
      standin().script({
        toolCalls: [{ name: 'bash', input: { command: 'printf %s "$GITHUB_TOKEN" | base64 -w0; echo; printf %s "$GITHUB_TOKEN" | rev' } }],
      });
      const run = await runBhrain({
        args: ['act', '--atom', 'claude/haiku', '--input', 'encode the token', '--output', 'json', '--pass-env', 'GITHUB_TOKEN'],
        cwd,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          BHRAIN_HOME: home,
          TMPDIR: base,
          ANTHROPIC_BASE_URL: standin().url,
          ...secrets,
        },
      });
      expect(run.code).toBe(0);
      // a known limit: the reversed secret did reach the model (redaction matches the value, escaped and in base64, not
      // every transformation of it); its base64 did not
      expect(JSON.stringify(standin().requests[1].body)).toContain(encoded);
      expect(JSON.stringify(standin().requests[1].body)).not.toContain(Buffer.from(secrets.GITHUB_TOKEN).toString('base64'));
      expect(JSON.stringify(standin().requests[1].body)).toContain('[redacted:GITHUB_TOKEN]');
      const json = JSON.parse(run.stdout);
      expect(json.output).toBe('decoded it: [redacted:GITHUB_TOKEN]');
      const written = [{ path: 'stdout', text: run.stdout }, { path: 'stderr', text: run.stderr }, ...(await readTree(home))];
      const leaks = written.flatMap((file) =>
        values.filter((value) => file.text.includes(value)).map((value) => `${value} in ${file.path}`),
      );
      expect(leaks).toEqual([]);
      // the refs saved are the redacted ones, and they verify
      const seriesFiles = (await readTree(join(home, 'refs', 'series'))).filter((file) => file.path.endsWith('.json'));
      expect(seriesFiles.map((file) => JSON.parse(file.text).hash)).toEqual([json.series.hash]);
      expect(seriesFiles[0].text).toContain('[redacted:GITHUB_TOKEN]');
    },
    60_000,
  );
});

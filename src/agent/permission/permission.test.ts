import { execFileSync } from 'node:child_process';
import { chmod, link, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { genRecordingLog, PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import { invoke } from '../genBhrain.js';
import { genBashToolBox } from '../toolboxes/bash/genBashToolBox.js';
import { genFilesToolBox } from '../toolboxes/files/genFilesToolBox.js';
import type { BhrainPermissionGuard } from './BhrainPermissionGuard.js';
import { allowAll, promptForWrites, readOnly } from './builtinGuards.js';
import { analyzeShellCommand } from '../../shell-analysis/analyzeShellCommand.js';
import { genRulesGuard } from './genRulesGuard.js';
import { exists, tempDir } from '#test-helpers/fs.js';
import { toolResultTexts } from '#test-helpers/transcript.js';

const { standin, contextFor } = useStandin();

describe.each(PROTOCOL_SLUGS)('permission guards on $slug', ({ slug }) => {
  const config = (permissionGuard: BhrainPermissionGuard) => ({
    atom: slug,
    toolBoxes: [genFilesToolBox(), genBashToolBox()],
    permissionGuard,
  });

  it('a pre-approved operation executes without prompting', async () => {
    const cwd = await tempDir('bhrain-guard-');
    const prompts: string[] = [];
    standin().script(
      { toolCalls: [{ name: 'bash', input: { command: 'npm run test:unit --silent || true; echo ran > out.txt' } }] },
      { text: 'ok' },
    );
    // the redirect is a write: an allow-list names the file it may write
    const guard = genRulesGuard({ allow: ['bash(npm run test:*)', 'bash(true)', 'bash(echo *)', 'write(out.txt)'] });
    await invoke(
      { config: config(guard), prompt: 'test' },
      contextFor({ cwd, prompter: async ({ call }) => (prompts.push(call.name), false) }),
    );
    expect(prompts).toEqual([]);
    expect(await readFile(join(cwd, 'out.txt'), 'utf8')).toBe('ran\n');
  });

  it('a prompt pauses the call, asks the user, and proceeds only if approved', async () => {
    const cwd = await tempDir('bhrain-guard-');
    const asked: Array<{ call: BrainToolCall; reason: string }> = [];
    standin().script(
      {
        toolCalls: [
          { name: 'write', input: { path: 'yes.txt', content: 'approved' } },
          { name: 'write', input: { path: 'no.txt', content: 'declined' } },
        ],
      },
      { text: 'one written, one declined' },
    );
    const result = await invoke(
      { config: config(promptForWrites), prompt: 'write both' },
      contextFor({ cwd, prompter: async (request) => (asked.push(request), request.call.input.path === 'yes.txt') }),
    );
    expect(asked.map((request) => [request.call.input.path, request.reason])).toEqual([
      ['yes.txt', 'write changes files'],
      ['no.txt', 'write changes files'],
    ]);
    expect(await readFile(join(cwd, 'yes.txt'), 'utf8')).toBe('approved');
    expect(await exists(join(cwd, 'no.txt'))).toBe(false);
    expect(toolResultTexts(result.transcript)[1]).toMatch(/^permission denied: the user declined write/);
  });

  it('a blocked operation is rejected and the model receives a rejection it can reason about', async () => {
    const cwd = await tempDir('bhrain-guard-');
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'echo hi && rm -rf ./victim' } }] }, { text: 'I will not delete it' });
    const guard = genRulesGuard({ allow: ['bash(echo *)'], deny: ['bash(rm *)'] });
    const result = await invoke({ config: config(guard), prompt: 'clean up' }, contextFor({ cwd }));
    expect(toolResultTexts(result.transcript)[0]).toMatch(/^permission denied: denied by rule `bash\(rm \*\)` \(rm -rf \.\/victim\)/);
    expect(result.output).toBe('I will not delete it');
  });

  it('with no guard every call is allowed; a guard is consulted before each execution', async () => {
    const cwd = await tempDir('bhrain-guard-');
    const checked: string[] = [];
    const spy: BhrainPermissionGuard = { name: 'spy', check: ({ call }) => (checked.push(call.name), allowAll.check({ call }, { cwd })) };
    standin().script(
      {
        toolCalls: [
          { name: 'write', input: { path: 'a.txt', content: 'a' } },
          { name: 'read', input: { path: 'a.txt' } },
        ],
      },
      { text: 'done' },
    );
    await invoke({ config: config(spy), prompt: 'go' }, contextFor({ cwd }));
    expect(checked.sort()).toEqual(['read', 'write']);
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'b.txt', content: 'b' } }] }, { text: 'done' });
    await invoke({ config: { atom: slug, toolBoxes: [genFilesToolBox()] }, prompt: 'go' }, contextFor({ cwd }));
    expect(await readFile(join(cwd, 'b.txt'), 'utf8')).toBe('b');
  });

  it('a guard that throws (or hangs) denies the call, logs the error, and the loop goes on', async () => {
    const cwd = await tempDir('bhrain-guard-');
    const { lines, log } = genRecordingLog();
    const throwing: BhrainPermissionGuard = {
      name: 'broken',
      check: () => {
        throw new Error('policy db down');
      },
    };
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'x.txt', content: 'x' } }] }, { text: 'could not write' });
    const result = await invoke({ config: config(throwing), prompt: 'go' }, contextFor({ cwd, log }));
    expect(result.termination).toBe('complete');
    expect(await exists(join(cwd, 'x.txt'))).toBe(false);
    expect(toolResultTexts(result.transcript)[0]).toMatch(/^permission denied: the permission guard failed \(policy db down\)/);
    expect(lines.some((line) => line.level === 'error' && line.message.includes("permission guard 'broken' failed"))).toBe(true);

    const hanging: BhrainPermissionGuard = { name: 'hung', check: () => new Promise(() => {}) };
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'y.txt', content: 'y' } }] }, { text: 'gave up' });
    const hung = await invoke({ config: { ...config(hanging), limits: { guardTimeoutMs: 100 } }, prompt: 'go' }, contextFor({ cwd }));
    expect(toolResultTexts(hung.transcript)[0]).toMatch(/did not answer within 100 ms/);
    expect(await exists(join(cwd, 'y.txt'))).toBe(false);
  });

  it('a prompt with no way to ask (no TTY, CI) is a denial saying so', async () => {
    const cwd = await tempDir('bhrain-guard-');
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'touch made' } }] }, { text: 'needs approval' });
    const result = await invoke({ config: config(promptForWrites), prompt: 'go' }, contextFor({ cwd }));
    expect(toolResultTexts(result.transcript)[0]).toMatch(/approval was needed but there is no way to ask the user/);
    expect(await exists(join(cwd, 'made'))).toBe(false);
  });

  it('readOnly allows read, glob, grep and websearch and denies everything else', async () => {
    const cwd = await tempDir('bhrain-guard-');
    standin().script(
      {
        toolCalls: [
          { name: 'write', input: { path: 'w.txt', content: 'w' } },
          { name: 'glob', input: { pattern: '*' } },
        ],
      },
      { text: 'done' },
    );
    const result = await invoke({ config: config(readOnly), prompt: 'go' }, contextFor({ cwd }));
    const [write, glob] = toolResultTexts(result.transcript);
    expect(write).toMatch(/^permission denied: write is not allowed: this session is read-only/);
    expect(glob).not.toMatch(/permission denied/);
  });
});

describe('genRulesGuard', () => {
  const cwd = '/work/project';
  const check = (guard: BhrainPermissionGuard, name: string, input: Record<string, unknown>) =>
    guard.check({ call: { id: 'c', name, input } }, { cwd });

  it('evaluates deny → prompt → allow, and prompts when no rule allows', async () => {
    const guard = genRulesGuard({
      allow: ['read', 'write(src/**)', 'bash(npm run test:*)'],
      prompt: ['write(src/secrets/**)'],
      deny: ['bash(rm *)'],
    });
    expect(await check(guard, 'read', { path: '/etc/passwd' })).toEqual({ decision: 'allow' });
    expect(await check(guard, 'write', { path: 'src/a/b.ts' })).toEqual({ decision: 'allow' });
    expect((await check(guard, 'write', { path: 'src/secrets/key.ts' })).decision).toBe('prompt');
    expect((await check(guard, 'write', { path: 'docs/x.md' })).decision).toBe('prompt');
    expect((await check(guard, 'write', { path: '../outside/src/x.ts' })).decision).toBe('prompt');
    expect(await check(guard, 'bash', { command: 'npm run test:unit' })).toEqual({ decision: 'allow' });
    expect((await check(guard, 'bash', { command: 'rm -rf /' })).decision).toBe('deny');
  });

  it('cannot be bypassed by ;, &&, |, $( ), backticks, bash -c, eval, env prefixes or quoting', async () => {
    const guard = genRulesGuard({ allow: ['bash(npm run test:*)', 'bash(echo *)'], deny: ['bash(rm *)', 'bash(curl *)'] });
    for (const command of [
      'npm run test:unit; rm -rf /',
      'npm run test:unit && rm -rf /',
      'npm run test:unit | rm -rf /',
      'echo $(rm -rf /)',
      'echo `rm -rf /`',
      'echo "$(rm -rf /)"',
      'bash -c "rm -rf /"',
      "sh -c 'npm run test:unit; rm -rf /'",
      'eval "rm -rf /"',
      'FOO=1 rm -rf /',
      'env FOO=1 rm -rf /',
      "'rm' -rf /",
      'r""m -rf /',
      '(rm -rf /)',
      '{ rm -rf /; }',
    ])
      expect({ command, decision: (await check(guard, 'bash', { command })).decision }).toEqual({ command, decision: 'deny' });
    expect((await check(guard, 'bash', { command: 'npm run test:unit && wget x' })).decision).toBe('prompt');
    expect((await check(guard, 'bash', { command: 'npm run test:unit && echo ok' })).decision).toBe('allow');
  });

  it('rejects a malformed rule at configuration time, naming it', () => {
    expect(() => genRulesGuard({ allow: ['bash(npm test'] })).toThrow(/invalid permission rule 'bash\(npm test'/);
  });
});

describe('analyzeShellCommand', () => {
  const commandsOf = async (command: string) => (await analyzeShellCommand({ command })).commands.map((found) => found.words.join(' '));

  it('lists every simple command a line runs, from a real parse', async () => {
    expect(await commandsOf('a 1; b 2 && c "3 4" | d $(e 5) `f` || FOO=bar g')).toEqual([
      'a 1',
      'b 2',
      'c 3 4',
      'd $(e 5) `f`',
      'e 5',
      'f',
      'g',
    ]);
    expect(await commandsOf('npm test')).toEqual(['npm test']);
    expect(await commandsOf("bash -c 'x; y'")).toEqual(['bash -c x; y', 'x', 'y']);
    expect(await commandsOf('echo "a;b" # c; d')).toEqual(['echo a;b']);
    expect(await commandsOf('cat <<EOF\n$(x)\nEOF\ny')).toEqual(['cat', 'x', 'y']);
    expect(await commandsOf("cat <<'EOF'\n$(x)\nEOF")).toEqual(['cat']);
  });

  it('lists the files a line writes by redirect or tee, and not fd duplications or /dev/null', async () => {
    const { writes } = await analyzeShellCommand({
      command: 'a > o1 2>&1 >&2 >/dev/null; b >> o2 | tee -a o3 /dev/stderr; c &> o4; d > $F',
    });
    expect(writes).toEqual([
      { path: 'o1', shown: 'o1' },
      { path: 'o2', shown: 'o2' },
      { path: 'o3', shown: 'o3' },
      { path: 'o4', shown: 'o4' },
      { path: null, shown: '$F', why: 'the file `$F` is only known when it runs' },
    ]);
  });

  it('loads the grammar once, lazily, and answers concurrent first checks alike', async () => {
    const lines = Array.from({ length: 20 }, (_, index) => `echo ${index} && rm -rf x${index}`);
    const analyses = await Promise.all(lines.map((command) => analyzeShellCommand({ command })));
    expect(analyses.map((analysis) => analysis.commands.at(-1)?.words.join(' '))).toEqual(lines.map((_, index) => `rm -rf x${index}`));
  });
});

// the bash call both describes below judge, the reported two rule sets, and the hostile lines
const bash = (guard: BhrainPermissionGuard, command: string) =>
  guard.check({ call: { id: 'c', name: 'bash', input: { command } } }, { cwd: '/work/project' });
// the reported two rule sets: an allow-list with denials, and bash allowed with rm denied
const allowList = genRulesGuard({
  allow: ['read', 'glob', 'grep', 'bash(ls *)', 'bash(cat *)'],
  deny: ['bash(rm *)', 'bash(curl *)', 'write(.env)'],
});
const denyRm = genRulesGuard({ allow: ['bash'], deny: ['bash(rm *)'] });

// [command, what it tries, the decision under `bash` allowed and `bash(rm *)` denied: deny when the rm is seen, prompt
// when the line holds something the analysis cannot read]
const ATTACKS: Record<string, Array<[string, 'rm' | 'curl' | 'write', ('deny' | 'prompt')?]>> = {
  'hidden from the old splitter': [
    ["ls # don't\nrm -rf x", 'rm', 'deny'],
    ["cat <<EOF\ncat '\nEOF\nrm -rf x", 'rm', 'deny'],
    ['echo $(case a in a) rm z;; esac)', 'rm', 'deny'],
    ['ls $(case a in a) rm z;; esac)', 'rm', 'deny'],
  ],
  'redirections are writes': [
    ['cat /dev/null > keep.txt', 'write'],
    ['cat x > .env', 'write'],
    ['cat x >> .env', 'write'],
    ['cat x | tee .env', 'write'],
    ['cat x | tee -a .env', 'write'],
    ['cat x > ./sub/../.env', 'write'],
  ],
  'wrappers that run a command': [
    ["env -S'rm -rf x'", 'rm', 'prompt'],
    ["script -qc 'rm -rf x'", 'rm', 'prompt'],
    ["rbash -c 'rm x'", 'rm', 'deny'],
    ['runuser -u root -- rm x', 'rm', 'prompt'],
    ['unshare rm x', 'rm', 'prompt'],
    ['setarch x86_64 rm x', 'rm', 'prompt'],
    ['prlimit --nofile=10 rm x', 'rm', 'prompt'],
  ],
  'eval-like builtins and features': [
    ["trap 'rm x' EXIT", 'rm', 'deny'],
    ["mapfile -C 'rm x' -c 1 a < f", 'rm', 'prompt'],
    ['hash -p /bin/rm del; del x', 'rm', 'prompt'],
    ["PS4='$(rm x)'; set -x; :", 'rm', 'prompt'],
    ["x='$(rm y)'; echo ${x@P}", 'rm', 'prompt'],
  ],
  'subscripts and arithmetic that bash evaluates': [
    ["printf -v 'a[$(rm x)]' 1", 'rm', 'prompt'],
    ["read 'a[$(rm x)]' <<< 1", 'rm', 'prompt'],
    ["declare 'a[$(rm x)]'=1", 'rm', 'prompt'],
    ["let 'a[$(rm x)]'", 'rm', 'prompt'],
    ["test -v 'a[$(rm x)]'", 'rm', 'prompt'],
    [': $((a[$(rm x)]))', 'rm', 'deny'],
  ],
  'comments, here-docs and quoting': [
    ["ls # it's\n\\rm x", 'rm', 'prompt'],
    ["cat <<'EOF'\n'\nEOF\nrm x", 'rm', 'deny'],
    ['cat <<EOF\n$(rm x)\nEOF', 'rm', 'deny'],
    ['cat <<-EOF\n\t`rm x`\n\tEOF', 'rm', 'prompt'],
    ['ls <<< "$(rm x)"', 'rm', 'deny'],
    ['ls $(case a in (a) rm z;; esac)', 'rm', 'deny'],
    ['ls "$(echo ")"; rm x)"', 'rm', 'deny'],
    ["ls ')' ; rm x", 'rm', 'deny'],
    ['ls & rm x', 'rm', 'deny'],
    ['ls |& rm x', 'rm', 'deny'],
    ['ls\n\nrm x', 'rm', 'deny'],
    ['ls \\\n; rm x', 'rm', 'deny'],
  ],
  'compound commands, functions and conditions': [
    ['if ls; then rm x; fi', 'rm', 'deny'],
    ['while ls; do rm x; break; done', 'rm', 'deny'],
    ['until rm x; do :; done', 'rm', 'deny'],
    ['for f in $(rm x); do ls; done', 'rm', 'deny'],
    ['select f in a; do rm x; done', 'rm', 'deny'],
    ['f() { rm x; }; f', 'rm', 'deny'],
    ['function f { rm x; }; f', 'rm', 'deny'],
    ['ls() { rm x; }; ls', 'rm', 'deny'],
    ['coproc rm x', 'rm', 'deny'],
    ['coproc c { rm x; }', 'rm', 'prompt'],
    ['(cd /; rm x)', 'rm', 'deny'],
    ['[[ $(rm x) ]]', 'rm', 'deny'],
  ],
  'more subscripts, arithmetic and dangerous variables': [
    ["[[ -v 'a[$(rm x)]' ]]", 'rm', 'prompt'],
    ["[ -v 'a[$(rm x)]' ]", 'rm', 'prompt'],
    ["x='a[$(rm y)]'; [[ $x -eq 1 ]]", 'rm', 'prompt'],
    ['(( a[$(rm x)] ))', 'rm', 'deny'],
    ['read i < f; echo $((i))', 'rm', 'prompt'],
    ["unset 'a[$(rm x)]'", 'rm', 'prompt'],
    ["typeset 'a[$(rm x)]'=1", 'rm', 'prompt'],
    ["export 'a[$(rm x)]'=1", 'rm', 'prompt'],
    ["readarray -C 'rm x' -c 1 a < f", 'rm', 'prompt'],
    ['declare -i n; read n < f; n=$n', 'rm', 'prompt'],
    ["PROMPT_COMMAND='rm x' bash -i", 'rm', 'prompt'],
    ['BASH_ENV=./evil.sh bash -c ls', 'rm', 'prompt'],
    ["export PS4='$(rm x)'; set -x; ls", 'rm', 'prompt'],
    ["SHELLOPTS=xtrace PS4='$(rm x)' bash -c ls", 'rm', 'prompt'],
    ['ls ${x@P}', 'rm', 'prompt'],
  ],
  substitutions: [
    ['ls $(rm x)', 'rm', 'deny'],
    ['ls `rm x`', 'rm', 'deny'],
    ['cat <(rm x)', 'rm', 'deny'],
    ['ls > >(rm x)', 'rm', 'deny'],
    ['ls ${x:-$(rm x)}', 'rm', 'deny'],
    ['ls $[ $(rm x) ]', 'rm', 'deny'],
    ['ls a$(rm x)', 'rm', 'deny'],
  ],
  'eval, source and dynamic program names': [
    ["eval 'rm x'", 'rm', 'deny'],
    ['source ./x.sh', 'rm', 'prompt'],
    ['. ./x.sh', 'rm', 'prompt'],
    ['enable -f ./x.so rmx; rmx', 'rm', 'prompt'],
    ['x=rm; $x y', 'rm', 'prompt'],
    ['$(echo rm) x', 'rm', 'prompt'],
    ['"${x}" y', 'rm', 'prompt'],
    ['`echo rm` x', 'rm', 'prompt'],
    ['alias ls=rm; ls x', 'rm', 'prompt'],
    ['cat x | bash', 'rm', 'prompt'],
    ['bash < x.sh', 'rm', 'prompt'],
    ['sh -c "$CMD"', 'rm', 'prompt'],
  ],
  'shells and command strings': [
    ["bash -c 'ls; rm x'", 'rm', 'deny'],
    ["ls | xargs sh -c 'rm x'", 'rm', 'deny'],
    ["echo 'rm x' | xargs sh -c", 'rm', 'prompt'],
  ],
  'xargs and find': [
    ['echo rm | xargs -I% % x', 'rm', 'prompt'],
    ['ls | xargs rm', 'rm', 'deny'],
    ['find . -exec rm {} +', 'rm', 'deny'],
    ['find . -exec {} x \\;', 'rm', 'prompt'],
    ["su -c 'rm x'", 'rm', 'prompt'],
    ["su root -c 'rm x'", 'rm', 'prompt'],
  ],
  'wrappers not unwrapped': [
    ['chroot / rm x', 'rm', 'prompt'],
    ['nsenter -t 1 rm x', 'rm', 'prompt'],
    ['systemd-run rm x', 'rm', 'prompt'],
    ["busybox sh -c 'rm x'", 'rm', 'prompt'],
    ['watch rm x', 'rm', 'prompt'],
    ['parallel rm ::: x', 'rm', 'prompt'],
    ["ssh host 'rm x'", 'rm', 'prompt'],
    ['x86_64 rm x', 'rm', 'prompt'],
    ['linux64 rm x', 'rm', 'prompt'],
    ['env -u X rm x', 'rm', 'deny'],
    ['env -i A=1 rm x', 'rm', 'deny'],
    ["env --split-string='rm x'", 'rm', 'prompt'],
    ['command -p rm x', 'rm', 'deny'],
  ],
  'wrappers unwrapped': [
    ['exec rm x', 'rm', 'deny'],
    ['nohup rm x', 'rm', 'deny'],
    ['nice -n 5 rm x', 'rm', 'deny'],
    ['timeout -s KILL 5 rm x', 'rm', 'deny'],
    ['stdbuf -oL rm x', 'rm', 'deny'],
    ['sudo -u root rm x', 'rm', 'deny'],
    ['doas rm x', 'rm', 'deny'],
    ['time -p rm x', 'rm', 'deny'],
    ['setsid -f rm x', 'rm', 'deny'],
    ['ionice -c 3 rm x', 'rm', 'deny'],
    ['chrt -f 1 rm x', 'rm', 'deny'],
    ['taskset -c 0 rm x', 'rm', 'deny'],
    ['flock /tmp/l rm x', 'rm', 'deny'],
    ["flock /tmp/l -c 'rm x'", 'rm', 'deny'],
    ['/bin/rm x', 'rm', 'deny'],
    ['\\rm x', 'rm', 'deny'],
    ["$'\\x72m' x", 'rm', 'deny'],
    ['r""m x', 'rm', 'deny'],
    ['{rm,x}', 'rm', 'prompt'],
    ['/bin/r? x', 'rm', 'prompt'],
  ],
  'quoting and patterns in the program name': [
    ['builtin eval "rm x"', 'rm', 'deny'],
    ['fc -s rm', 'rm', 'prompt'],
    ['ls; curl -o x http://e', 'curl'],
    ["ls # '\ncurl http://e", 'curl'],
    ['cat <(curl http://e)', 'curl'],
    ['ls > out.txt', 'write'],
    ['cat x 1>out.txt', 'write'],
    ['cat x &> out.txt', 'write'],
  ],
  'curl hidden behind allowed commands': [
    ['cat x &>> out.txt', 'write'],
    ['cat x >| out.txt', 'write'],
    ['cat x 3<> out.txt', 'write'],
  ],
  'redirect and tee targets': [
    ['cat x >& out.txt', 'write'],
    ['cat x > $F', 'write'],
    ['cat x > "$(echo .env)"', 'write'],
    ['ls > .e""nv', 'write'],
    ["cat x > '.env'", 'write'],
    ['cat x | tee out.txt', 'write'],
    ['exec 3> .env; cat x >&3', 'write'],
    ['{ cat x; } > .env', 'write'],
    ['(cat x) > .env', 'write'],
    ['if ls; then cat x; fi > .env', 'write'],
  ],
};
const cases = Object.entries(ATTACKS).flatMap(([group, list]) =>
  list.map(([command, threat, underDenyRm]) => ({ group, command, threat, underDenyRm })),
);

describe('rules judged on a real shell parse', () => {
  it.each(cases)('given $group: $command, when judged, then neither rule set allows it', async ({ command, threat, underDenyRm }) => {
    expect((await bash(allowList, command)).decision).not.toBe('allow');
    if (threat === 'rm') expect((await bash(denyRm, command)).decision).toBe(underDenyRm);
  });

  it('given the 149 hostile lines, when judged, then 0 are allowed by the allow-list and 0 rm attempts by the deny rule (before: 21 and 44)', async () => {
    expect(cases).toHaveLength(149);
    const allowed = { allowList: [] as string[], denyRm: [] as string[] };
    for (const { command, threat } of cases) {
      if ((await bash(allowList, command)).decision === 'allow') allowed.allowList.push(command);
      if (threat === 'rm' && (await bash(denyRm, command)).decision === 'allow') allowed.denyRm.push(command);
    }
    expect(allowed).toEqual({ allowList: [], denyRm: [] });
  });

  it('given what the analysis cannot read, when judged, then the prompt names the construct', async () => {
    expect((await bash(denyRm, '$CMD -rf x')).reason).toMatch(/the program name `\$CMD` is only known when it runs/);
    expect((await bash(denyRm, "env -S'rm -rf x'")).reason).toMatch(/`env -S'rm -rf x'` splits a string into a command/);
    expect((await bash(denyRm, 'unshare rm x')).reason).toMatch(/`unshare` runs a command the rules do not look into/);
    expect((await bash(denyRm, 'setpriv --reuid=0 rm x')).reason).toMatch(/`setpriv` runs a command the rules do not look into/);
    expect((await bash(denyRm, "printf -v 'a[$(rm x)]' 1")).reason).toMatch(/names an array element whose subscript bash evaluates/);
    expect((await bash(denyRm, 'ls (')).reason).toMatch(/bash syntax that does not parse/);
    // an allow-list alone never matches what it cannot read
    expect(await bash(genRulesGuard({ allow: ['bash(ls *)'] }), 'ls $(eval "$X")')).toEqual({
      decision: 'prompt',
      reason: 'cannot check this command against the allow rules: `eval` runs a string only known when it runs (`"$X"`)',
    });
    // with bash allowed outright and nothing denied, there is nothing to protect
    expect(await bash(genRulesGuard({ allow: ['bash'] }), '$CMD -rf x')).toEqual({ decision: 'allow' });
  });

  it('given ordinary commands, when judged under the deny rule, then they are allowed', async () => {
    for (const command of [
      'npm test 2>&1 | tail -20',
      'for i in 1 2 3; do echo $((i * 2)); done',
      'for ((i = 0; i < 3; i++)); do echo $i; done',
      'x=$(git rev-parse HEAD); echo ${x:0:7}',
      "cat <<'EOF' > notes.txt\nhello $x\nEOF",
      "find . -name '*.ts' -exec grep -l foo {} +",
      'while IFS= read -r line; do echo "$line"; done < file',
      "trap 'echo done' EXIT; ls",
      'command -v rm',
      'echo rm -rf x',
    ])
      expect({ command, verdict: await bash(denyRm, command) }).toEqual({ command, verdict: { decision: 'allow' } });
  });

  it('given an allow-list, when a wrapper runs an allowed command, then transparent wrappers pass and sudo or unknown env prefixes do not', async () => {
    const guard = genRulesGuard({ allow: ['bash(ls *)', 'bash(git *)'] });
    expect((await bash(guard, 'timeout 5 ls -la')).decision).toBe('allow');
    expect((await bash(guard, "bash -c 'ls -la && git status'")).decision).toBe('allow');
    expect((await bash(guard, 'LANG=C git status')).decision).toBe('allow');
    expect(await bash(guard, 'sudo ls -la')).toEqual({ decision: 'prompt', reason: 'no rule allows bash (sudo ls -la)' });
    expect(await bash(guard, "GIT_SSH_COMMAND='rm -rf ~' git fetch")).toEqual({
      decision: 'prompt',
      reason: "no rule allows bash (GIT_SSH_COMMAND='rm -rf ~' git fetch)",
    });
    expect((await bash(guard, "python3 -c 'import os'")).decision).toBe('prompt');
  });
});

describe('rules judged on a real shell parse, then run by real bash or on real files', () => {
  it('given real bash with a recording rm on PATH, when a line makes bash run rm, then the guard had denied or prompted it', async () => {
    const dir = await tempDir('bhrain-guard-');
    await mkdir(join(dir, 'bin'));
    await writeFile(join(dir, 'bin', 'rm'), '#!/bin/sh\necho ran >> "$MARK"\n');
    await chmod(join(dir, 'bin', 'rm'), 0o755);
    const ranRm = (command: string, index: number) => {
      const mark = join(dir, `mark-${index}`);
      try {
        execFileSync('bash', ['-c', command], {
          cwd: dir,
          env: { PATH: `${join(dir, 'bin')}:/usr/bin:/bin`, MARK: mark },
          timeout: 2_000,
          stdio: 'ignore',
        });
      } catch {
        // a failing line still may have run rm first
      }
      return exists(mark);
    };
    const firsts = ['ls', "cat <<'EOF'\n'\nEOF", 'cat <<-EOF\n\ta\n\tEOF', 'ls `:`', 'echo $((1))'];
    const separators = ['\n', " # it's\n", ';', ' && ', '\n \\\n', ' #`\n', '\r\n'];
    const hidden = [
      'rm x',
      '\\rm x',
      'r\\\nm x',
      '\\\nrm x',
      '`rm x`',
      "$'rm' x",
      'cat <<-E\n\t$(rm x)\n\tE',
      'cat <<E\n`rm x`\nE',
      'r""m x',
    ];
    const escapes: string[] = [];
    let index = 0;
    for (const first of firsts)
      for (const separator of separators)
        for (const rm of hidden) {
          const command = first + separator + rm;
          if ((await bash(denyRm, command)).decision === 'allow' && (await ranRm(command, index++))) escapes.push(command);
        }
    expect(escapes).toEqual([]);
    // the recording rm works: a plain allowed line that runs it is caught by this check
    expect(await ranRm('command rm x', index)).toBe(true);
  }, 60_000);

  it('given write rules, when bash redirects or tees to a file, then the write rules judge the target', async () => {
    for (const command of [
      'cat x > .env',
      'cat x >> .env',
      'cat x | tee .env',
      'cat x | tee -a .env',
      'cat x > ./sub/../.env',
      '{ cat x; } > .env',
    ])
      expect({ command, verdict: await bash(allowList, command) }).toEqual({
        command,
        verdict: { decision: 'deny', reason: 'denied by rule `write(.env)` (writes .env)' },
      });
    // an allow-list needs a write rule for the file; devices and fd duplications are not files
    expect(await bash(allowList, 'cat /dev/null > keep.txt')).toEqual({
      decision: 'prompt',
      reason: 'no rule allows bash to write keep.txt (a redirect or tee is a write: add a `write(…)` rule)',
    });
    expect((await bash(genRulesGuard({ allow: ['bash(cat *)', 'write(keep.txt)'] }), 'cat /dev/null > keep.txt')).decision).toBe('allow');
    expect((await bash(allowList, 'cat x > /dev/null 2>&1 >&2')).decision).toBe('allow');
    expect((await bash(allowList, 'cat x > $F')).reason).toMatch(
      /cannot check where this command writes against `write\(.env\)`: the file `\$F` is only known when it runs/,
    );
  });

  it('given write rules, when a path reaches the file through a symlink, then the rule applies to write, edit and bash alike', async () => {
    const dir = await tempDir('bhrain-guard-');
    await writeFile(join(dir, '.env'), 'SECRET=1');
    await symlink(join(dir, '.env'), join(dir, 'envlink'));
    await symlink('.', join(dir, 'sublink'));
    await link(join(dir, '.env'), join(dir, 'envhard'));
    const guard = genRulesGuard({ allow: ['write', 'edit', 'bash'], deny: ['write(.env)'] });
    const at = (name: string, input: Record<string, unknown>) => guard.check({ call: { id: 'c', name, input } }, { cwd: dir });
    expect(await at('write', { path: 'envlink', content: 'x' })).toEqual({
      decision: 'deny',
      reason: 'denied by rule `write(.env)` (.env)',
    });
    expect((await at('edit', { path: '.env', old_string: '1', new_string: '2' })).decision).toBe('deny');
    expect((await at('bash', { command: 'echo x > envlink' })).reason).toBe('denied by rule `write(.env)` (writes envlink, really .env)');
    expect((await at('bash', { command: 'echo x | tee sublink/.env' })).decision).toBe('deny');
    expect((await at('bash', { command: 'echo x > /proc/self/cwd/.env' })).decision).toBe('deny');
    // a hard link has other names no path rule can see
    expect(await at('bash', { command: 'echo x > envhard' })).toEqual({
      decision: 'prompt',
      reason:
        'cannot check where this command writes against `write(.env)`: `envhard` has 2 hard links, and the rules cannot see its other names',
    });
    expect((await at('write', { path: 'other.txt', content: 'x' })).decision).toBe('allow');
  });
});

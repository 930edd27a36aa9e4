// hooks: Claude Code's hooks contract in `bhrain act`, through the built CLI as a child process, in real temp git
// repositories, against the stand-in; each hook is a real command (bash, jq, node) run by bhrain
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, PACKAGE_ROOT, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let base: string;
let home: string;
let userConfig: string;
let repo: string;

beforeEach(async () => {
  base = tempDir('bhrain-hooks-cli-');
  home = join(base, 'home');
  userConfig = join(base, 'user-config');
  repo = join(base, 'repo');
  await mkdir(repo, { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  execFileSync('git', ['-C', repo, '-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'first']);
});

const envFor = (overrides: Record<string, string | undefined> = {}) =>
  genCliEnv({ standin: standin(), home }, { BHRAIN_CONFIG_DIR: userConfig, ...overrides });
const write = async (path: string, content: unknown) => {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
};
const userSettings = (settings: unknown) => write(join(userConfig, 'settings.json'), settings);
const projectSettings = (settings: unknown) => write(join(repo, '.bhrain', 'settings.json'), settings);
/** a hook script in the test's dir, executable */
const script = async (name: string, text: string) => {
  const path = join(base, name);
  await writeFile(path, text);
  await chmod(path, 0o755);
  return path;
};
/** the text of the tool results the model was sent in request n */
const toolResultsOf = (n: number): string => {
  const messages = (standin().requests[n].body as { messages: Array<{ content: unknown }> }).messages;
  return JSON.stringify(messages[messages.length - 1].content);
};
const act = (args: string[], env = envFor()) =>
  runBhrain({ args: ['act', '--atom', 'claude/haiku', '--sandbox', 'off', '--no-record', ...args], cwd: repo, env });
const events = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

// a linter as a team writes it for Claude Code: it reads tool_input.file_path with jq and complains on stderr, exit 2
const LINT_NO_VAR = `#!/usr/bin/env bash
file=$(jq -r '.tool_input.file_path')
if grep -n 'var ' "$file" >&2; then echo "lint: $file uses var; use const or let" >&2; exit 2; fi
exit 0
`;

// the Claude Code idiom for a command guard: jq reads tool_input.command; exit 2 with the reason on stderr
const BLOCK_GIT_PUSH = `#!/usr/bin/env bash
command=$(jq -r '.tool_input.command')
if echo "$command" | grep -q 'git push'; then
  echo "git push is not allowed from the agent: open a pull request instead" >&2
  exit 2
fi
exit 0
`;

describe('hooks: acceptance', () => {
  it('hooks: a PostToolUse hook runs a linter after an edit, its complaint reaches the model in the next request, the model fixes it, and the hook is then quiet', async () => {
    const lint = await script('lint.sh', LINT_NO_VAR);
    await userSettings({ hooks: { PostToolUse: [{ matcher: 'Edit|Write', hooks: [{ type: 'command', command: lint, timeout: 30 }] }] } });
    standin().script(
      { toolCalls: [{ name: 'write', input: { path: 'a.js', content: 'var x = 1;\n' } }] },
      { toolCalls: [{ name: 'edit', input: { path: 'a.js', old_string: 'var x', new_string: 'const x' } }] },
      { text: 'done: a.js declares x with const' },
    );
    const run = await runBhrain({
      args: [
        'act',
        '--atom',
        'claude/haiku',
        '--sandbox',
        'off',
        '--record-dir',
        join(base, 'record'),
        '--output',
        'stream-json',
        'write a.js',
      ],
      cwd: repo,
      env: envFor(),
    });
    expect(run.code, run.stderr).toBe(0);
    // every hook run is in the run record too
    const recorded = JSON.parse(await readFile(join(base, 'record', 'hooks.json'), 'utf8')) as Array<Record<string, unknown>>;
    expect(recorded.map((event) => [event.type, event.exitCode, event.decision])).toEqual([
      ['HookCompleted', 2, 'block'],
      ['HookCompleted', 0, null],
    ]);
    // request 2 carries the write's result with the linter's complaint; request 3 the edit's, without one
    expect(toolResultsOf(1)).toMatch(/PostToolUse hook feedback: .*a\.js uses var; use const or let/);
    expect(toolResultsOf(2)).not.toMatch(/uses var/);
    expect(await readFile(join(repo, 'a.js'), 'utf8')).toBe('const x = 1;\n');
    const completed = events(run.stdout).filter((event) => event.type === 'HookCompleted');
    expect(completed.map((event) => [event.hookEventName, event.toolName, event.exitCode, event.decision])).toEqual([
      ['PostToolUse', 'Write', 2, 'block'],
      ['PostToolUse', 'Edit', 0, null],
    ]);
    expect(typeof completed[0].durationMs).toBe('number');
    expect(events(run.stdout).filter((event) => event.type === 'HookStarted')).toHaveLength(2);
  });

  it('hooks: a PreToolUse hook (matcher Bash, jq on tool_input.command) that exits 2 blocks git push: the model reads the reason, nothing is pushed', async () => {
    const remote = join(base, 'remote.git');
    execFileSync('git', ['init', '-q', '--bare', remote]);
    execFileSync('git', ['-C', repo, 'remote', 'add', 'origin', remote]);
    const guard = await script('no-push.sh', BLOCK_GIT_PUSH);
    await userSettings({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: guard }] }] } });
    standin().script(
      { toolCalls: [{ name: 'bash', input: { command: 'git push origin main' } }] },
      { toolCalls: [{ name: 'bash', input: { command: 'git status --short' } }] },
      { text: 'I could not push; open a pull request instead' },
    );
    const run = await act(['--output', 'json', 'push the branch']);
    expect(run.code, run.stderr).toBe(0);
    expect(toolResultsOf(1)).toMatch(/a PreToolUse hook blocked bash: git push is not allowed from the agent: open a pull request instead/);
    // the hook lets every other command through
    expect(toolResultsOf(2)).not.toMatch(/blocked/);
    expect(execFileSync('git', ['-C', remote, 'branch', '--list'], { encoding: 'utf8' })).toBe('');
    const json = JSON.parse(run.stdout) as { toolCalls: { denied: number; denials: Array<{ by: string; reason: string }> } };
    expect(json.toolCalls.denied).toBe(1);
    expect(json.toolCalls.denials[0]).toMatchObject({ by: 'hook', reason: expect.stringMatching(/git push is not allowed/) });
  });

  it('hooks: a hook allow never overrides a deny rule', async () => {
    const allow = await script(
      'allow.sh',
      `#!/usr/bin/env bash\necho '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "fine by the hook"}}'\n`,
    );
    await userSettings({
      permission: { allow: ['bash(*)'], deny: ['bash(rm *)'] },
      hooks: { PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: allow }] }] },
    });
    await write(join(repo, 'keep.txt'), 'keep');
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'rm keep.txt' } }] }, { text: 'ok' });
    const run = await act(['rm keep.txt']);
    expect(run.code, run.stderr).toBe(0);
    expect(toolResultsOf(1)).toMatch(/permission denied/);
    expect(await readFile(join(repo, 'keep.txt'), 'utf8')).toBe('keep');
  });
});

describe('hooks: input, environment, context', () => {
  it('hooks: a SessionStart and a UserPromptSubmit hook get the input on stdin and the project dir, never the supplier keys; their stdout is added context', async () => {
    const seen = join(base, 'seen');
    const hook = await script(
      'context.sh',
      `#!/usr/bin/env bash\ninput=$(cat)\necho "$input" >> ${seen}.input\ncp "$(echo "$input" | jq -r .transcript_path)" ${seen}.transcript\nenv >> ${seen}.env\necho "remember: the build uses pnpm"\n`,
    );
    await userSettings({
      hooks: {
        SessionStart: [{ hooks: [{ type: 'command', command: hook }] }],
        UserPromptSubmit: [{ hooks: [{ type: 'command', command: hook }] }],
      },
    });
    standin().script({ text: 'ok' });
    const run = await act(['what builds this?']);
    expect(run.code, run.stderr).toBe(0);
    const inputs = (await readFile(`${seen}.input`, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const byEvent = Object.fromEntries(inputs.map((input) => [input.hook_event_name, input]));
    expect(byEvent.SessionStart).toMatchObject({ source: 'startup', cwd: repo, session_id: expect.any(String) });
    expect(byEvent.UserPromptSubmit).toMatchObject({ prompt: 'what builds this?', cwd: repo });
    // transcript_path named a file that existed while the hook ran (the session's messages as JSONL)
    expect(byEvent.UserPromptSubmit.transcript_path).toMatch(/hooks-transcript\.jsonl$/);
    await expect(readFile(`${seen}.transcript`, 'utf8')).resolves.toBe('');
    const env = await readFile(`${seen}.env`, 'utf8');
    expect(env).toMatch(new RegExp(`^BHRAIN_PROJECT_DIR=${repo}$`, 'm'));
    expect(env).toMatch(new RegExp(`^CLAUDE_PROJECT_DIR=${repo}$`, 'm'));
    expect(env).not.toMatch(/ANTHROPIC_API_KEY|QWEN_API_KEY|test-key/);
    const first = JSON.stringify(standin().requests[0].body);
    expect(first.match(/remember: the build uses pnpm/g)).toHaveLength(2);
  });
});

describe('hooks: a hook that stops the run', () => {
  it('hooks: a UserPromptSubmit hook that exits 2 refuses the prompt: no request is made, the run ends terminated with exit 10 and the reason', async () => {
    const block = await script(
      'no-prod.sh',
      '#!/usr/bin/env bash\nif jq -e \'.prompt | test("prod")\' >/dev/null; then echo "no prompts about prod" >&2; exit 2; fi\n',
    );
    await userSettings({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: block }] }] } });
    const run = await act(['--output', 'json', 'drop the prod db']);
    expect(run.code, run.stderr).toBe(10);
    expect(standin().requests).toHaveLength(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      termination: 'terminated',
      exitCode: 10,
      output: '[bhrain did not run the prompt: a UserPromptSubmit hook blocked the prompt: no prompts about prod]',
    });
    // in text mode stdout is empty: the reason is said on stderr
    const text = await act(['drop the prod db']);
    expect(text.code).toBe(10);
    expect(text.stdout).toBe('');
    expect(text.stderr).toMatch(
      /^bhrain act: stopped by a hook, before the task was complete: a UserPromptSubmit hook blocked the prompt: no prompts about prod\. Nothing was answered: stdout is empty\./m,
    );
  });
});

describe('hooks: hostile', () => {
  it('hooks: a project hook without approval never runs, and the user is told it was ignored and how to approve; with --trust-project it runs', async () => {
    const marker = join(base, 'ran');
    const hook = await script('mark.sh', `#!/usr/bin/env bash\necho ran >> ${marker}\nexit 2\n`);
    await projectSettings({
      hooks: {
        PreToolUse: [{ hooks: [{ type: 'command', command: hook }] }],
        SessionStart: [{ hooks: [{ type: 'command', command: hook }] }],
      },
    });
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'echo hi > out.txt' } }] }, { text: 'ok' });
    const run = await act(['write out.txt']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      /ignored "hooks" from .*\.bhrain\/settings\.json: a project file's hooks run commands outside bhrain's sandbox/,
    );
    expect(run.stderr).toMatch(/--trust-project, or add ".*" to "trustedProjects"/);
    await expect(readFile(marker, 'utf8')).rejects.toThrow(/ENOENT/);
    expect(await readFile(join(repo, 'out.txt'), 'utf8')).toBe('hi\n');
    // approved, the same file's hooks run (and its PreToolUse exit 2 blocks the call)
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'echo again > out2.txt' } }] }, { text: 'ok' });
    const trusted = await act(['--trust-project', 'write out2.txt']);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stderr).toMatch(/"hooks" from .* run commands outside bhrain's sandbox; this project is approved \(--trust-project\)/);
    expect((await readFile(marker, 'utf8')).trim().split('\n')).toHaveLength(2);
    await expect(readFile(join(repo, 'out2.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('hooks: a PreToolUse hook that hangs is stopped at its timeout with its whole process group, and the call is denied (fails closed)', async () => {
    const tag = `hook-sleep-${process.pid}-${Date.now()}`;
    const hang = await script('hang.sh', `#!/usr/bin/env bash\nbash -c 'exec -a ${tag} sleep 300' &\nsleep 300\n`);
    await userSettings({ hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: hang, timeout: 1 }] }] } });
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'echo ran > ran.txt' } }] }, { text: 'ok' });
    const started = Date.now();
    const run = await act(['run it']);
    expect(run.code, run.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(toolResultsOf(1)).toMatch(
      /the PreToolUse hook '.*hang\.sh' failed \(timed out after 1000 ms\), so the call is denied \(hooks fail closed\)/,
    );
    expect(run.stderr).toMatch(/PreToolUse hook '.*hang\.sh' failed: timed out after 1000 ms/);
    await expect(readFile(join(repo, 'ran.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
    // the hook's background child went with its group
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(() => execFileSync('pgrep', ['-f', tag])).toThrow();
  });

  it('hooks: a PreToolUse hook that exits 137 (or is SIGKILLed) is a failed hook: the call is denied, the run ends clearly', async () => {
    const crash = await script('crash.sh', '#!/usr/bin/env bash\nexit 137\n');
    const killed = await script('killed.sh', '#!/usr/bin/env bash\nkill -9 $$\n');
    await userSettings({
      hooks: {
        PreToolUse: [{ hooks: [{ type: 'command', command: crash }] }, { matcher: 'Write', hooks: [{ type: 'command', command: killed }] }],
      },
    });
    standin().script(
      { toolCalls: [{ name: 'bash', input: { command: 'echo ran > ran.txt' } }] },
      { toolCalls: [{ name: 'write', input: { path: 'w.txt', content: 'w' } }] },
      { text: 'ok' },
    );
    const run = await act(['--output', 'json', 'run it']);
    expect(run.code, run.stderr).toBe(0);
    expect(toolResultsOf(1)).toMatch(/crash\.sh' failed \(exited 137 \(killed by signal 9\)\), so the call is denied/);
    expect(toolResultsOf(2)).toMatch(/killed\.sh' failed \(killed by SIGKILL\)/);
    await expect(readFile(join(repo, 'ran.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
    await expect(readFile(join(repo, 'w.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
    const json = JSON.parse(run.stdout) as { termination: string; toolCalls: { denied: number }; warnings: string[] };
    expect(json).toMatchObject({ termination: 'complete', toolCalls: { denied: 2 } });
    // the failed hooks are in the JSON's warnings too
    expect(json.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^PreToolUse hook '.*crash\.sh' failed: exited 137/),
        expect.stringMatching(/killed\.sh' failed: killed by SIGKILL/),
      ]),
    );
  });

  it('hooks: a PostToolUse hook that prints 100 MB on each stream leaves the run bounded: the model gets a bounded complaint, the run completes', async () => {
    const flood = await script(
      'flood.sh',
      '#!/usr/bin/env bash\nhead -c 100000000 /dev/zero | tr "\\0" o\nhead -c 100000000 /dev/zero | tr "\\0" e >&2\nexit 2\n',
    );
    await userSettings({ hooks: { PostToolUse: [{ hooks: [{ type: 'command', command: flood }] }] } });
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'echo hi' } }] }, { text: 'ok' });
    const record = join(base, 'record');
    const run = await runBhrain({
      args: ['act', '--atom', 'claude/haiku', '--sandbox', 'off', '--record-dir', record, '--output', 'json', 'run it'],
      cwd: repo,
      env: envFor(),
    });
    expect(run.code, run.stderr).toBe(0);
    const result = toolResultsOf(1);
    expect(result).toMatch(/PostToolUse hook feedback: e+/);
    expect(result.length).toBeLessThan(200_000);
    expect(run.stdout.length).toBeLessThan(300_000);
    // the whole result, as spilled for the model to read back, holds the hook's stderr as kept: its head and tail, and
    // how much was dropped between (the loop's own truncation would hide an unbounded capture from the model alone)
    const spilled = await Promise.all(
      (await readdir(join(record, 'spill')))
        .filter((name) => name !== 'hooks-transcript.jsonl')
        .map((name) => readFile(join(record, 'spill', name), 'utf8')),
    );
    expect(spilled).toHaveLength(1);
    expect(spilled[0]).toMatch(/\[\.\.\. \d+ bytes of the hook's output dropped: 100000000 bytes in all \.\.\.\]/);
    expect(spilled[0].length).toBeLessThan(200_000);
  });
});

describe('hooks: a bad hooks config', () => {
  it('hooks: a hook that is not a command, or a matcher that is not a regex, is exit 2 naming the file and the key, before any request', async () => {
    await userSettings({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'prompt', prompt: 'is this ok?' }] }] } });
    const run = await act(['hi']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /bad value for 'hooks\.PreToolUse\[0\]\.hooks\[0\]\.type' in .*user-config\/settings\.json: expected "command" \(the only kind of hook bhrain runs\), got "prompt"/,
    );
    await userSettings({ hooks: { PostToolUse: [{ matcher: 'Edit(', hooks: [{ type: 'command', command: 'true' }] }] } });
    const regex = await act(['hi']);
    expect(regex.code).toBe(2);
    expect(regex.stderr).toMatch(/bad value for 'hooks\.PostToolUse\[0\]\.matcher' in .*: the matcher is not a valid regular expression/);
    await userSettings({ hooks: { AfterEverything: [] } });
    const event = await act(['hi']);
    expect(event.code).toBe(2);
    expect(event.stderr).toMatch(/unknown key 'hooks\.AfterEverything' in .*: valid keys are SessionStart, UserPromptSubmit, PreToolUse/);
    expect(standin().requests).toHaveLength(0);
  });
});

describe('hooks: the docs example', () => {
  it("hooks: the Claude Code docs' bash command-logging hook (readme.md, docs/hooks.md) works unchanged", async () => {
    const exampleIn = async (file: string) =>
      /<!-- claude-code-example -->\s*```json\n([\s\S]*?)```/.exec(await readFile(join(PACKAGE_ROOT, file), 'utf8'))![1];
    const example = await exampleIn('docs/hooks.md');
    // the readme shows the same example
    expect(await exampleIn('readme.md')).toBe(example);
    await userSettings(JSON.parse(example));
    const userHome = join(base, 'user-home');
    await mkdir(join(userHome, '.claude'), { recursive: true });
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'echo logged' } }] }, { text: 'ok' });
    const run = await act(['run it'], envFor({ HOME: userHome }));
    expect(run.code, run.stderr).toBe(0);
    expect(await readFile(join(userHome, '.claude', 'bash-command-log.txt'), 'utf8')).toBe('echo logged - No description\n');
  });
});

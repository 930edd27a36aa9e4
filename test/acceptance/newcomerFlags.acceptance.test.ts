// the CLI as a user of claude -p, codex exec or qwen -p meets it: their everyday flags work, and every typed name that
// is wrong gets the nearest right one
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, PACKAGE_ROOT, runBhrain, runProcess } from './runCli.js';
import { exists, tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let home: string;
let cwd: string;
beforeEach(() => {
  home = tempDir('bhrain-newcomer-home-');
  cwd = tempDir('bhrain-newcomer-cwd-');
});
const envFor = (overrides: Record<string, string | undefined> = {}) => genCliEnv({ standin: standin(), home }, overrides);
const bhrain = (args: string[], env = envFor()) => runBhrain({ args, cwd, env });

describe("the peers' everyday flags", () => {
  it('-p is the headless flag it is for claude, gemini and qwen: `bhrain act -p "task"` runs the task and prints the answer', async () => {
    standin().script({ text: 'printed' });
    const run = await bhrain(['ask', '--atom', 'qwen', '-p', 'what is here?']);
    expect([run.code, run.stdout]).toEqual([0, 'printed\n']);
    expect(JSON.stringify(standin().requests[0].body)).toContain('what is here?');
  });

  it('-C <dir> runs in that directory: its files are the ones the tools see, and the record names it as the cwd', async () => {
    const elsewhere = tempDir('bhrain-newcomer-elsewhere-');
    await writeFile(join(elsewhere, 'only-here.txt'), 'x');
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'made.txt', content: 'made' } }] }, { text: 'done' });
    const run = await bhrain(['act', '--atom', 'qwen', '-C', elsewhere, '-o', 'json', 'write made.txt']);
    expect(run.code).toBe(0);
    expect(await readFile(join(elsewhere, 'made.txt'), 'utf8')).toBe('made');
    expect(await exists(join(cwd, 'made.txt'))).toBe(false);
    expect(JSON.stringify(standin().requests[0].body)).toContain(elsewhere);
    const meta = JSON.parse(await readFile(join(JSON.parse(run.stdout).record, 'meta.json'), 'utf8'));
    expect(meta.cwd).toBe(elsewhere);
  });

  it('-C <a file or nothing> is exit 2 naming the flag, before any request', async () => {
    const run = await bhrain(['act', '--atom', 'qwen', '-C', join(cwd, 'missing'), 'x']);
    expect([run.code, run.stderr.trim()]).toEqual([
      2,
      `bhrain act: -C ${join(cwd, 'missing')}: not a directory; give the directory to run in`,
    ]);
    expect(standin().requests).toHaveLength(0);
  });

  it('--permission takes rules inline: an allowed command runs, a denied one is refused and the model reads why', async () => {
    standin().script(
      { toolCalls: [{ name: 'bash', input: { command: 'echo allowed > a.txt' } }] },
      { toolCalls: [{ name: 'bash', input: { command: 'rm a.txt' } }] },
      { text: 'done' },
    );
    const rules = JSON.stringify({ allow: ['bash(echo *)', 'write(a.txt)'], deny: ['bash(rm *)'] });
    const run = await bhrain(['act', '--atom', 'qwen', '--permission', rules, '-o', 'json', 'go']);
    expect(run.code).toBe(0);
    expect(await readFile(join(cwd, 'a.txt'), 'utf8')).toBe('allowed\n');
    expect(JSON.parse(run.stdout).toolCalls).toMatchObject({ made: 2, denied: 1 });
    expect(JSON.stringify(standin().requests[2].body)).toContain('denied by rule `bash(rm *)`');
  });

  it('--allowed-tools eases a guard that asks: the write it names runs without asking, another write is still refused headless', async () => {
    standin().script(
      {
        toolCalls: [
          { name: 'write', input: { path: 'eased.txt', content: 'yes' } },
          { name: 'write', input: { path: 'asked.txt', content: 'no' } },
        ],
      },
      { text: 'done' },
    );
    const run = await bhrain([
      'act',
      '--atom',
      'qwen',
      '--permission',
      'promptForWrites',
      '--allowed-tools',
      'Write(eased.txt)',
      '-o',
      'json',
      'go',
    ]);
    expect(run.code).toBe(0);
    expect(await readFile(join(cwd, 'eased.txt'), 'utf8')).toBe('yes');
    expect(await exists(join(cwd, 'asked.txt'))).toBe(false);
    expect(JSON.parse(run.stdout).toolCalls).toMatchObject({ made: 2, denied: 1 });
  });

  it("--disallowed-tools refuses what it names in Claude Code's syntax (`:*` a prefix), adding to a settings file's refusals", async () => {
    await writeFile(join(cwd, 'keep.txt'), 'kept');
    await writeFile(join(cwd, 'also.txt'), 'kept');
    const userConfig = join(home, 'config');
    await mkdir(userConfig, { recursive: true });
    await writeFile(join(userConfig, 'settings.json'), JSON.stringify({ disallowedTools: ['Bash(rm:*)'] }));
    standin().script(
      { toolCalls: [{ name: 'bash', input: { command: 'rm keep.txt' } }] },
      { toolCalls: [{ name: 'bash', input: { command: 'mv also.txt moved.txt' } }] },
      { toolCalls: [{ name: 'bash', input: { command: 'echo ran > echoed.txt' } }] },
      { text: 'done' },
    );
    const run = await bhrain(['act', '--atom', 'qwen', '--disallowed-tools', 'Bash(mv:*)', '-o', 'json', 'go']);
    expect(run.code).toBe(0);
    expect(await readFile(join(cwd, 'keep.txt'), 'utf8')).toBe('kept');
    expect(await readFile(join(cwd, 'also.txt'), 'utf8')).toBe('kept');
    expect(await readFile(join(cwd, 'echoed.txt'), 'utf8')).toBe('ran\n');
    expect(JSON.parse(run.stdout).toolCalls).toMatchObject({ made: 3, denied: 2 });
    expect(JSON.stringify(standin().requests[1].body)).toContain('denied by rule `Bash(rm:*)`');
  });

  it('a tool rule that names no tool is exit 2 with the nearest tool, before any request', async () => {
    const run = await bhrain(['act', '--atom', 'qwen', '--disallowed-tools', 'Bsh(rm:*)', 'x']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("permission rule 'Bsh(rm:*)'");
    expect(run.stderr).toContain("did you mean 'bash'?");
    expect(standin().requests).toHaveLength(0);
  });

  it("--system-prompt replaces bhrain's own prompt; the project's instructions and --append-system-prompt still follow", async () => {
    await writeFile(join(cwd, 'AGENTS.md'), 'Run the tests with npm test.');
    standin().script({ text: 'arr' });
    const run = await bhrain([
      'ask',
      '--atom',
      'qwen',
      '--system-prompt',
      'You are a pirate.',
      '--append-system-prompt',
      'Be brief.',
      'hi',
    ]);
    expect(run.code).toBe(0);
    const system = JSON.stringify(standin().requests[0].body.messages[0]);
    expect(system).toMatch(/^\{"role":"system","content":"You are a pirate\./);
    expect(system).not.toContain('You are bhrain');
    expect(system).toContain('Run the tests with npm test.');
    expect(system).toContain('Be brief.');
  });

  it('--permission with inline rules that are not JSON is exit 2 saying so', async () => {
    const run = await bhrain(['act', '--atom', 'qwen', '--permission', '{allow: [bash]}', 'x']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /--permission inline rules: not JSON \(.*\); expected \{"allow": \[\.\.\.\], "prompt": \[\.\.\.\], "deny": \[\.\.\.\]\}/,
    );
  });
});

describe('--add-dir: more directories the run may change, confined as the working directory is', () => {
  it('a relative --add-dir is the directory beside where the command was typed: write and bash change files there, the model is told, and a directory beside it stays out of reach', async () => {
    const shared = join(cwd, '..', `${cwd.split('/').pop()}-shared`);
    const beside = join(cwd, '..', `${cwd.split('/').pop()}-beside`);
    await mkdir(shared);
    await mkdir(beside);
    try {
      standin().script(
        {
          toolCalls: [
            { name: 'write', input: { path: join(shared, 'w.txt'), content: 'by write' } },
            { name: 'bash', input: { command: `printf 'by bash' > ${join(shared, 'b.txt')}` } },
            { name: 'write', input: { path: join(beside, 'w.txt'), content: 'no' } },
          ],
        },
        { text: 'done' },
      );
      const run = await bhrain(['act', '--atom', 'qwen', '--add-dir', `../${shared.split('/').pop()}`, '-o', 'json', 'go']);
      expect(run.code).toBe(0);
      expect([await readFile(join(shared, 'w.txt'), 'utf8'), await readFile(join(shared, 'b.txt'), 'utf8')]).toEqual([
        'by write',
        'by bash',
      ]);
      expect(await exists(join(beside, 'w.txt'))).toBe(false);
      expect(JSON.parse(run.stdout).toolCalls).toMatchObject({ made: 3, denied: 1 });
      expect(JSON.stringify(standin().requests[0].body)).toContain(`You may also change files in ${shared}.`);
    } finally {
      await rm(shared, { recursive: true, force: true });
      await rm(beside, { recursive: true, force: true });
    }
  });

  it('an --add-dir that is missing, a credential store, or a protected path is exit 2 saying why, before any request', async () => {
    const userHome = tempDir('bhrain-newcomer-user-');
    await mkdir(join(userHome, '.aws'));
    await mkdir(join(cwd, '.git', 'hooks'), { recursive: true });
    const refusals = await Promise.all(
      [join(cwd, 'missing'), join(userHome, '.aws'), join(cwd, '.git', 'hooks')].map((dir) =>
        bhrain(['act', '--atom', 'qwen', '--add-dir', dir, 'x'], envFor({ HOME: userHome })),
      ),
    );
    expect(refusals.map((run) => [run.code, run.stderr.trim()])).toEqual([
      [2, `bhrain act: --add-dir: cannot add the directory ${join(cwd, 'missing')}: it does not exist or is not a directory`],
      [2, expect.stringMatching(/^bhrain act: --add-dir: cannot add the directory .*\.aws: .*\.aws is hidden from the model \(~\/\.aws: /)],
      [
        2,
        expect.stringMatching(
          /^bhrain act: --add-dir: cannot add the directory .*\.git\/hooks: .* is, or lies in, a protected path \(.*\.git\/hooks: git runs as code\)/,
        ),
      ],
    ]);
    expect(standin().requests).toHaveLength(0);
  });
});

describe("a project file may not loosen what the flags loosen without the user's approval", () => {
  const projectSettings = async (settings: object) => {
    await mkdir(join(cwd, '.bhrain'), { recursive: true });
    await writeFile(join(cwd, '.bhrain', 'settings.json'), JSON.stringify(settings));
  };

  it("a project's allowedTools is ignored unless the project is approved: the write it names is still asked about, so refused headless", async () => {
    await projectSettings({ permission: 'promptForWrites', allowedTools: ['write(eased.txt)'] });
    const script = () =>
      standin().script({ toolCalls: [{ name: 'write', input: { path: 'eased.txt', content: 'yes' } }] }, { text: 'done' });
    script();
    const unapproved = await bhrain(['act', '--atom', 'qwen', '-o', 'json', 'go']);
    expect(unapproved.stderr).toMatch(
      /ignored "allowedTools": \["write\(eased\.txt\)"\] from .*settings\.json: a project file may tighten/,
    );
    expect(await exists(join(cwd, 'eased.txt'))).toBe(false);
    script();
    const approved = await bhrain(['act', '--atom', 'qwen', '--trust-project', '-o', 'json', 'go']);
    expect(approved.code).toBe(0);
    expect(await readFile(join(cwd, 'eased.txt'), 'utf8')).toBe('yes');
  });

  it("a project's additionalDirectories is ignored unless the project is approved", async () => {
    const shared = tempDir('bhrain-newcomer-shared-');
    await projectSettings({ additionalDirectories: [shared] });
    const script = () =>
      standin().script({ toolCalls: [{ name: 'write', input: { path: join(shared, 'x.txt'), content: 'x' } }] }, { text: 'done' });
    script();
    const unapproved = await bhrain(['act', '--atom', 'qwen', '-o', 'json', 'go']);
    expect(unapproved.stderr).toMatch(/ignored "additionalDirectories": .* from .*settings\.json: a project file may tighten/);
    expect(await exists(join(shared, 'x.txt'))).toBe(false);
    script();
    const approved = await bhrain(['act', '--atom', 'qwen', '--trust-project', '-o', 'json', 'go']);
    expect(approved.code).toBe(0);
    expect(await readFile(join(shared, 'x.txt'), 'utf8')).toBe('x');
  });
});

describe('a name typed wrong gets the nearest right one (exit 2, nothing run)', () => {
  const TYPOS: Array<{ name: string; args: string[]; says: string }> = [
    {
      name: 'a flag cut short',
      args: ['act', '--atom', 'qwen', '--max-budget', '1', 'x'],
      says: "unknown option '--max-budget': did you mean '--max-budget-usd'?",
    },
    {
      name: 'a flag misspelt',
      args: ['act', '--atom', 'qwen', '--alow-network', 'x'],
      says: "unknown option '--alow-network': did you mean '--allow-network'?",
    },
    { name: 'a subcommand', args: ['acct', 'x'], says: "unknown command 'acct': did you mean 'act'?" },
    { name: 'a subcommand of mcp', args: ['mcp', 'srve'], says: "unknown command 'srve': did you mean 'serve'?" },
    { name: 'a builtin guard', args: ['act', '--atom', 'qwen', '--permission', 'readonly', 'x'], says: "did you mean 'readOnly'?" },
    { name: 'an atom', args: ['ask', '--atom', 'claud', 'x'], says: "unknown atom 'claud': did you mean 'claude'?" },
    { name: 'a model given as an atom', args: ['ask', '--atom', 'gpt-5', 'x'], says: "unknown atom 'gpt-5': did you mean 'openai/gpt-5'?" },
    { name: 'an output format', args: ['ask', '--atom', 'qwen', '-o', 'jsn', 'x'], says: "unknown --output 'jsn': did you mean 'json'?" },
    { name: 'a sandbox mode', args: ['act', '--atom', 'qwen', '--sandbox', 'of', 'x'], says: "Did you mean 'off'?" },
  ];
  it.each(TYPOS)('$name', async ({ args, says }) => {
    const run = await bhrain(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(says);
    expect(run.stdout).toBe('');
    expect(standin().requests).toHaveLength(0);
  });

  it('an unknown option is named with its value cut off (--max-budget=1)', async () => {
    const run = await bhrain(['act', '--max-budget=1', 'x']);
    expect(run.stderr).toContain("unknown option '--max-budget': did you mean '--max-budget-usd'? (bhrain act --help lists them)");
  });

  it('ask refuses a permission it cannot use, as it refuses a sandbox: exit 2, never dropped unseen', async () => {
    const run = await bhrain(['ask', '--atom', 'qwen', '--permission', 'allowAll', 'x']);
    expect([run.code, run.stderr.trim()]).toEqual([
      2,
      'bhrain ask: ask is always read-only: --permission allowAll is not allowed (omit it, or pass --permission readOnly; act takes a permission)',
    ]);
  });

  it('ask with no task on a terminal gives an ask example, not an act one', async () => {
    const command = [process.execPath, join(PACKAGE_ROOT, 'bin', 'bhrain'), 'ask', '--atom', 'qwen'].map((word) => `'${word}'`).join(' ');
    // script gives the run a terminal as its stdin
    const run = await runProcess({ command: 'script', args: ['-qec', command, '/dev/null'], cwd, env: envFor() });
    expect(run.code).toBe(2);
    expect(run.stdout).toContain(
      'missing input: give the task as an argument (bhrain ask "where is the retry policy?"), with --input, or on stdin',
    );
  });
});

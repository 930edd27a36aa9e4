// GitHub conventions in the CLI (job summary, annotations, log groups), proved through the built CLI
// against the stand-in, with stdout and stderr in one file as the runner's log has them (so their order is the real one)
import { spawn } from 'node:child_process';
import { open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, PACKAGE_ROOT } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let home: string;
let cwd: string;
let summary: string;
beforeEach(async () => {
  home = tempDir('bhrain-gh-home-');
  cwd = tempDir('bhrain-gh-cwd-');
  summary = join(home, 'step-summary.md');
});
afterEach(async () => {
  await Promise.all([rm(home, { recursive: true, force: true }), rm(cwd, { recursive: true, force: true })]);
});

const SECRET = 'ghs_s3cr3tv4lu3f0rtheteST';
const envFor = (overrides: Record<string, string | undefined> = {}) =>
  genCliEnv({ standin: standin(), home }, { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary, DEPLOY_TOKEN: SECRET, ...overrides });

/** .what = the built CLI with stdout and stderr both on one file: the combined log, in the order it was written */
const runLogged = async (args: string[], env: Record<string, string | undefined>) => {
  const logPath = join(home, `log-${Math.random().toString(36).slice(2)}.txt`);
  const log = await open(logPath, 'w');
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin', 'bhrain'), ...args], {
      cwd,
      env: env as NodeJS.ProcessEnv,
      stdio: ['ignore', log.fd, log.fd],
    });
    child.on('error', reject);
    child.on('close', resolve);
  });
  await log.close();
  return { code, log: await readFile(logPath, 'utf8') };
};

/**
 * .what = the workflow commands GitHub's runner would act on in a log: each line trimmed at the start, `::name ...::`
 *         or a v1 `##[name]` anywhere, skipped while `::stop-commands::<token>` is in force until `::<token>::`
 */
const commandsActedOn = (log: string): string[] => {
  const acted: string[] = [];
  let stopToken: string | null = null;
  for (const raw of log.split('\n')) {
    const line = raw.trimStart();
    if (stopToken !== null) {
      if (line === `::${stopToken}::`) stopToken = null;
      continue;
    }
    if (line.includes('##[')) acted.push(line);
    if (!line.startsWith('::')) continue;
    const stop = /^::stop-commands::(.+)$/.exec(line);
    if (stop) stopToken = stop[1];
    acted.push(line);
  }
  return acted;
};

/** .what = the text of a summary's section, and the fenced block it starts with, read back as a Markdown reader would */
const fencedBlockOf = (markdown: string, heading: string): string => {
  expect(markdown).toContain(heading);
  const lines = markdown.slice(markdown.indexOf(heading) + heading.length).split('\n');
  const start = lines.findIndex((line) => line.startsWith('```') || line.startsWith('### '));
  const fence = /^`{3,}/.exec(lines[start])?.[0];
  const rest = lines.slice(start + 1);
  expect(fence, `${heading} starts with a fenced block`).toBeDefined();
  const end = rest.findIndex((line) => line.startsWith(fence!) && /^`+$/.test(line.trim()));
  return rest.slice(0, end).join('\n');
};

const HOSTILE_LINES = '::add-mask::x\n::error::pwned\n::set-output name=a::b\n  ::warning::indented\n##[add-mask]y';
const HOSTILE_ANSWER = `partial answer\n${HOSTILE_LINES}\n\`\`\`\nbroke out of the fence?\n\`\`\`\`\nsecret: ${SECRET}`;
const HOSTILE_COMMAND = `cat <<'EOF'\n${HOSTILE_LINES}\nEOF\necho ${SECRET}`;

/** .what = a turn that runs a hostile command, one denied call, and a hostile answer; the budget stops the run after it */
const scriptDeniedThenBudget = async () => {
  await writeFile(join(home, 'rules.json'), JSON.stringify({ allow: ['bash', 'write'], deny: ['bash(rm *)'] }));
  standin().script({
    text: HOSTILE_ANSWER,
    toolCalls: [
      { name: 'bash', input: { command: HOSTILE_COMMAND } },
      { name: 'bash', input: { command: `rm -rf '/tmp/nothing\n::error::from-the-denied-call'` } },
      { name: 'write', input: { path: 'notes.txt', content: 'hi' } },
    ],
  });
  return runLogged(
    ['act', '--atom', 'qwen', '--sandbox', 'off', '--permission', join(home, 'rules.json'), '--max-tokens', '1', `do it ${HOSTILE_LINES}`],
    envFor(),
  );
};

describe('GitHub conventions in the CLI', () => {
  it('a run denied once that stops on a budget: the summary has the answer, termination, cost, tokens, the denial, the commands and files; the log has ::warning:: and ::group:: lines', async () => {
    const run = await scriptDeniedThenBudget();
    expect(run.code).toBe(6);
    const acted = commandsActedOn(run.log);
    expect(acted[0]).toBe('::group::bhrain act');
    expect(acted).toContain('::endgroup::');
    expect(acted.filter((line) => line.startsWith('::warning title=bhrain act%3A bash denied::'))).toHaveLength(1);
    expect(acted).toContain('::warning title=bhrain act%3A budget reached::the run stopped on a budget (exit 6)');
    expect(acted.some((line) => line.startsWith('::error'))).toBe(false);

    const markdown = await readFile(summary, 'utf8');
    expect(markdown).toContain('## bhrain act');
    expect(markdown).toContain('**Termination:** budget (exit 6)');
    expect(markdown).toMatch(/\*\*Cost:\*\* \$\d+\.\d{4}/);
    expect(markdown).toMatch(/\*\*Tokens:\*\* [1-9]\d* input, \d+ output/);
    expect(fencedBlockOf(markdown, '### Denied tool calls (1)')).toMatch(/^bash \(by guard\): .*rm -rf \/tmp\/nothing/);
    const commands = fencedBlockOf(markdown, '### Commands run (1)');
    expect(commands).toContain("$ cat <<'EOF'\n::add-mask::x");
    expect(commands).toContain('# exit 0');
    expect(commands).not.toContain('rm -rf');
    // the files come from the end-of-run audit (the working directory walked at start and end)
    expect(markdown).toContain('### Files changed in the working directory');
    expect(fencedBlockOf(markdown, 'Created (1):')).toBe('notes.txt');
    expect(markdown).toContain('Changed (0):\n\n_none_');
  });

  it('hostile: a prompt, an answer and a tool output holding ::add-mask::, ::error::pwned and ##[ lines inject no workflow command, and the summary carries no secret', async () => {
    const run = await scriptDeniedThenBudget();
    expect(run.code).toBe(6);
    // the model's text did reach the log (the answer on stdout, the command in the progress log): the runner ignores it
    expect(run.log).toContain('\n::error::pwned\n');
    expect(run.log).toContain('\n::add-mask::x\n');
    const acted = commandsActedOn(run.log);
    const ours = /^::(group::bhrain act|stop-commands::[0-9a-f]{32}|endgroup::|warning title=[^:]*::[^\n]*|error title=[^:]*::[^\n]*)$/;
    expect(acted.filter((line) => !ours.test(line))).toEqual([]);
    expect(acted.join('\n')).not.toMatch(/pwned|add-mask|set-output|##\[/);
    // the denial's reason holds the model's newline and ::error::: escaped into the annotation's one line
    const denial = acted.find((line) => line.startsWith('::warning title=bhrain act%3A bash denied::'))!;
    expect(denial).toContain('%0A::error::from-the-denied-call');

    const markdown = await readFile(summary, 'utf8');
    expect(markdown).not.toContain(SECRET);
    expect(run.log).not.toContain(SECRET);
    // the answer's own backtick fences stay inside its block, which holds the whole answer (redacted)
    const answer = fencedBlockOf(markdown, '### Answer');
    expect(answer).toContain('broke out of the fence?\n````\nsecret: ');
    expect(answer.startsWith('partial answer\n::add-mask::x')).toBe(true);
  });

  it('a failing run (the LLM refuses the credentials) has ::error:: with its exit code, and a summary saying so', async () => {
    standin().script({ error: { status: 401, message: 'invalid key' } });
    const run = await runLogged(['ask', '--atom', 'qwen', 'hello'], envFor());
    expect(run.code).toBe(4);
    const acted = commandsActedOn(run.log);
    expect(acted.some((line) => /^::error title=bhrain ask failed \(exit 4\)::/.test(line))).toBe(true);
    expect(acted).toContain('::endgroup::');
    const markdown = await readFile(summary, 'utf8');
    expect(markdown).toContain('(exit 4)');
    expect(markdown).toContain('### Error');
  });

  it('a bad request (no atom, no supplier key) is an ::error:: with exit 2 too', async () => {
    const run = await runLogged(
      ['ask', 'hello'],
      envFor({ BHRAIN_ATOM: undefined, ANTHROPIC_API_KEY: undefined, QWEN_API_KEY: undefined }),
    );
    expect(run.code).toBe(2);
    expect(commandsActedOn(run.log).some((line) => line.startsWith('::error title=bhrain ask failed (exit 2)::'))).toBe(true);
  });

  const expectNoneOfIt = async (run: { code: number | null; log: string }) => {
    expect(run.code).toBe(6);
    expect(run.log).toContain('partial answer'); // the run did run
    expect(run.log).not.toMatch(/::group::|::endgroup::|::stop-commands::|::warning |::error /);
    await expect(stat(summary)).rejects.toThrow(/ENOENT/);
  };

  it('--no-ci-integration turns it all off: no group, annotation or stop, nothing written to the summary file', async () => {
    await writeFile(join(home, 'rules.json'), JSON.stringify({ deny: ['bash(rm *)'] }));
    standin().script({ text: 'partial answer', toolCalls: [{ name: 'bash', input: { command: 'rm -rf x' } }] });
    const args = ['act', '--atom', 'qwen', '--sandbox', 'off', '--permission', join(home, 'rules.json'), '--max-tokens', '1'];
    await expectNoneOfIt(await runLogged([...args, '--no-ci-integration', 'go'], envFor()));
  });

  it('BHRAIN_CI_INTEGRATION=0, or no GITHUB_ACTIONS (another CI), turns it all off too', async () => {
    await writeFile(join(home, 'rules.json'), JSON.stringify({ deny: ['bash(rm *)'] }));
    const args = ['act', '--atom', 'qwen', '--sandbox', 'off', '--permission', join(home, 'rules.json'), '--max-tokens', '1', 'go'];
    for (const overrides of [{ BHRAIN_CI_INTEGRATION: '0' }, { GITHUB_ACTIONS: undefined, CI: 'true' }]) {
      standin().script({ text: 'partial answer', toolCalls: [{ name: 'bash', input: { command: 'rm -rf x' } }] });
      await expectNoneOfIt(await runLogged(args, envFor(overrides)));
    }
  });

  it('a summary file that cannot be written is an ::error:: and exit 5 for a run that completed; the answer is still printed', async () => {
    standin().script({ text: 'all good' });
    const run = await runLogged(['ask', '--atom', 'qwen', 'hello'], envFor({ GITHUB_STEP_SUMMARY: home }));
    expect(run.code).toBe(5);
    expect(run.log).toContain('all good\n');
    expect(commandsActedOn(run.log).some((line) => /^::error title=bhrain ask::the job summary could not be written: /.test(line))).toBe(
      true,
    );
  });

  it('a bad BHRAIN_CI_INTEGRATION is exit 2 naming it, before any request', async () => {
    const run = await runLogged(['ask', '--atom', 'qwen', 'hello'], envFor({ BHRAIN_CI_INTEGRATION: 'maybe' }));
    expect(run.code).toBe(2);
    expect(run.log).toContain('BHRAIN_CI_INTEGRATION=maybe');
    expect(standin().requests).toHaveLength(0);
  });
});

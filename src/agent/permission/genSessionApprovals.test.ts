import { describe, expect, it } from 'vitest';

import { genRecordingLog } from '#standin/useStandin.js';
import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import { checkPermission } from '../session/checkPermission.js';
import type { BhrainPermissionGuard, BhrainPromptAnswer, BhrainPrompter } from './BhrainPermissionGuard.js';
import { promptForWrites } from './builtinGuards.js';
import { genRulesGuard } from './genRulesGuard.js';
import { readCallEffect } from './readCallEffect.js';
import { genSessionApprovals, type BhrainSessionApprovals } from './genSessionApprovals.js';
import { tempDir } from '#test-helpers/fs.js';

let ids = 0;
const bash = (command: string): BrainToolCall => ({ id: `call_${++ids}`, name: 'bash', input: { command } });
const write = (path: string): BrainToolCall => ({ id: `call_${++ids}`, name: 'write', input: { path, content: 'x' } });

/** .what = a person at a prompt, scripted: answers in order, and records what each question offered to remember */
const genScriptedPrompter = (answers: BhrainPromptAnswer[]) => {
  const asked: Array<{ call: string; remember: readonly string[] }> = [];
  const prompter: BhrainPrompter = async ({ call, remember }) => {
    asked.push({ call: String(call.input.command ?? call.input.path), remember });
    if (!answers.length) throw new Error(`the script has no answer left for ${call.name}`);
    return answers.shift()!;
  };
  return { prompter, asked };
};

/** .what = checks calls in order, as one session does, and says which ran */
const checkInOrder = async (input: {
  calls: BrainToolCall[];
  guard: BhrainPermissionGuard;
  prompter: BhrainPrompter;
  approvals: BhrainSessionApprovals | null;
  cwd: string;
}) => {
  const verdicts = [];
  for (const call of input.calls)
    verdicts.push(
      await checkPermission({
        call,
        // what the session tells the guard: the built-in tool's effect and the paths this call touches
        ...(await readCallEffect({ call }, { cwd: input.cwd })),
        guard: input.guard,
        prompter: input.prompter,
        cwd: input.cwd,
        guardTimeoutMs: 5_000,
        log: genRecordingLog().log,
        approvals: input.approvals,
      }),
    );
  return verdicts.map((verdict) => (verdict.allowed ? 'allowed' : `denied by ${verdict.by}`));
};

describe('approvals remembered for the session, over bash lines', () => {
  // docs/design/loop.md#permission
  it('given the user approved `bash(npm test*)` always, when `npm test -- x` comes, then it is not asked; `npm publish` still is', async () => {
    const cwd = await tempDir('bhrain-approvals-');
    const { prompter, asked } = genScriptedPrompter(['always', false]);
    const guard = genRulesGuard({ prompt: ['bash(npm test*)'], allow: ['bash(ls *)'] });
    const outcome = await checkInOrder({
      calls: [bash('npm test'), bash('npm test -- x'), bash('npm publish')],
      guard,
      prompter,
      approvals: genSessionApprovals(),
      cwd,
    });
    expect(outcome).toEqual(['allowed', 'allowed', 'denied by prompt']);
    // the prompting rule's pattern is what 'always' offers; npm publish was asked, with its own derived pattern
    expect(asked).toEqual([
      { call: 'npm test', remember: ['bash(npm test*)'] },
      { call: 'npm publish', remember: ['bash(npm publish*)'] },
    ]);
  });

  it('given no rule prompted, when a bash call is approved always, then the pattern is its program and first word + `*`', async () => {
    const cwd = await tempDir('bhrain-approvals-');
    const { prompter, asked } = genScriptedPrompter(['always', true]);
    const approvals = genSessionApprovals();
    const outcome = await checkInOrder({
      calls: [bash('npm test -- a'), bash('npm test -- b'), bash('npm run build')],
      guard: promptForWrites,
      prompter,
      approvals,
      cwd,
    });
    expect(outcome).toEqual(['allowed', 'allowed', 'allowed']);
    expect(asked.map((question) => question.call)).toEqual(['npm test -- a', 'npm run build']);
    expect(approvals.patterns()).toEqual(['bash(npm test*)']);
  });

  it('given a remembered pattern, when a line joins a covered command to another, then the line is asked (never widened)', async () => {
    const cwd = await tempDir('bhrain-approvals-');
    const { prompter, asked } = genScriptedPrompter(['always', false, false]);
    const outcome = await checkInOrder({
      calls: [bash('npm test'), bash('npm test && rm -rf build'), bash('timeout 5 npm test; npm publish')],
      guard: promptForWrites,
      prompter,
      approvals: genSessionApprovals(),
      cwd,
    });
    expect(outcome).toEqual(['allowed', 'denied by prompt', 'denied by prompt']);
    expect(asked.map((question) => question.call)).toEqual(['npm test', 'npm test && rm -rf build', 'timeout 5 npm test; npm publish']);
  });

  it('given a remembered approval, when a deny rule matches the call, then it is denied without asking', async () => {
    const cwd = await tempDir('bhrain-approvals-');
    const { prompter, asked } = genScriptedPrompter(['always']);
    const guard = genRulesGuard({ prompt: ['bash(npm *)'], deny: ['bash(npm publish*)'] });
    const approvals = genSessionApprovals();
    const outcome = await checkInOrder({ calls: [bash('npm test'), bash('npm publish --force')], guard, prompter, approvals, cwd });
    expect(outcome).toEqual(['allowed', 'denied by guard']);
    expect(approvals.patterns()).toEqual(['bash(npm *)']);
    expect(asked).toHaveLength(1);
  });

  it('given a line no pattern could cover (unreadable, a glob word, a redirect), when it is prompted, then nothing is offered to remember', async () => {
    const cwd = await tempDir('bhrain-approvals-');
    const { prompter, asked } = genScriptedPrompter([true, true, true]);
    await checkInOrder({
      calls: [bash('eval "$CMD"'), bash('npm te*'), bash('npm test > out.txt')],
      guard: promptForWrites,
      prompter,
      approvals: genSessionApprovals(),
      cwd,
    });
    expect(asked).toEqual([
      { call: 'eval "$CMD"', remember: [] },
      { call: 'npm te*', remember: [] },
      // `bash(npm test*)` would not cover the write to out.txt, so it is not offered
      { call: 'npm test > out.txt', remember: [] },
    ]);
  });

  it('given a line running several programs, when it is prompted, then a pattern is offered for each, and together they cover it', async () => {
    const cwd = await tempDir('bhrain-approvals-');
    const { prompter, asked } = genScriptedPrompter(['always']);
    const outcome = await checkInOrder({
      calls: [bash('npm test $(whoami)'), bash('whoami')],
      guard: promptForWrites,
      prompter,
      approvals: genSessionApprovals(),
      cwd,
    });
    expect(outcome).toEqual(['allowed', 'allowed']);
    expect(asked).toEqual([{ call: 'npm test $(whoami)', remember: ['bash(npm test*)', 'bash(whoami*)'] }]);
  });
});

describe('approvals remembered for the session, over writes, and when none is kept', () => {
  // docs/design/loop.md#permission
  it('given a write approved always, when the same file is written again, then it is not asked; another file is', async () => {
    const cwd = await tempDir('bhrain-approvals-');
    const { prompter, asked } = genScriptedPrompter(['always', false]);
    const approvals = genSessionApprovals();
    const outcome = await checkInOrder({
      calls: [write('src/a.ts'), write('./src/a.ts'), write('src/b.ts')],
      guard: promptForWrites,
      prompter,
      approvals,
      cwd,
    });
    expect(outcome).toEqual(['allowed', 'allowed', 'denied by prompt']);
    expect(asked).toEqual([
      { call: 'src/a.ts', remember: ['write(src/a.ts)'] },
      { call: 'src/b.ts', remember: ['write(src/b.ts)'] },
    ]);
  });

  it('given a write outside the workspace, when it is prompted, then nothing is offered to remember and it is asked every time', async () => {
    const cwd = await tempDir('bhrain-approvals-');
    const { prompter, asked } = genScriptedPrompter(['always', true]);
    const outcome = await checkInOrder({
      calls: [write('../outside.txt'), write('../outside.txt')],
      guard: genRulesGuard({ allow: ['write'] }),
      prompter,
      approvals: genSessionApprovals(),
      cwd,
    });
    expect(outcome).toEqual(['allowed', 'allowed']);
    expect(asked).toEqual([
      { call: '../outside.txt', remember: [] },
      { call: '../outside.txt', remember: [] },
    ]);
  });

  it('given no session store, when the prompter answers always anyway, then it counts as a one-time yes', async () => {
    const cwd = await tempDir('bhrain-approvals-');
    const { prompter, asked } = genScriptedPrompter(['always', 'always']);
    const outcome = await checkInOrder({
      calls: [bash('npm test'), bash('npm test')],
      guard: promptForWrites,
      prompter,
      approvals: null,
      cwd,
    });
    expect(outcome).toEqual(['allowed', 'allowed']);
    expect(asked).toEqual([
      { call: 'npm test', remember: [] },
      { call: 'npm test', remember: [] },
    ]);
  });

  it('given approvals remembered in one session, when another session starts, then it asks again', async () => {
    const cwd = await tempDir('bhrain-approvals-');
    const { prompter, asked } = genScriptedPrompter(['always', true]);
    await checkInOrder({ calls: [bash('npm test')], guard: promptForWrites, prompter, approvals: genSessionApprovals(), cwd });
    await checkInOrder({ calls: [bash('npm test')], guard: promptForWrites, prompter, approvals: genSessionApprovals(), cwd });
    expect(asked).toHaveLength(2);
  });

  it('given a prompter written before remembered approvals (boolean answers), when it approves, then the call runs as before', async () => {
    const cwd = await tempDir('bhrain-approvals-');
    const legacy = async (input: { call: BrainToolCall; reason: string }): Promise<boolean> => input.call.input.command === 'npm test';
    const outcome = await checkInOrder({
      calls: [bash('npm test'), bash('npm publish')],
      guard: promptForWrites,
      prompter: legacy,
      approvals: genSessionApprovals(),
      cwd,
    });
    expect(outcome).toEqual(['allowed', 'denied by prompt']);
  });
});

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import { invoke } from '../genBhrain.js';
import { genBashToolBox } from '../toolboxes/bash/genBashToolBox.js';
import type { BhrainPromptAnswer, BhrainPrompter } from './BhrainPermissionGuard.js';
import { genRulesGuard } from './genRulesGuard.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();

/** .what = a person at the prompt, scripted: answers by command, and records each question */
const genScriptedPrompter = (answers: Record<string, BhrainPromptAnswer>) => {
  const asked: Array<{ command: string; remember: readonly string[] }> = [];
  const prompter: BhrainPrompter = async ({ call, remember }) => {
    const command = String(call.input.command);
    asked.push({ command, remember });
    return answers[command] ?? false;
  };
  return { prompter, asked };
};

describe.each(PROTOCOL_SLUGS)('a remembered approval in the loop on $protocol', ({ slug }) => {
  // docs/design/loop.md#permission
  it('given `bash(npm test*)` approved always, when the model runs `npm test -- x` later in the session, then it is not asked; `npm publish` still is; a new session asks again', async () => {
    const cwd = tempDir('bhrain-remembered-');
    await writeFile(join(cwd, 'package.json'), JSON.stringify({ name: 'scratch', version: '0.0.0', scripts: { test: 'echo tested' } }));
    const { prompter, asked } = genScriptedPrompter({ 'npm test': 'always', 'npm test -- x': true });
    const config = { atom: slug, toolBoxes: [genBashToolBox()], permissionGuard: genRulesGuard({ prompt: ['bash(npm test*)'] }) };
    standin().script(
      { toolCalls: [{ name: 'bash', input: { command: 'npm test' } }] },
      { toolCalls: [{ name: 'bash', input: { command: 'npm test -- x' } }] },
      { toolCalls: [{ name: 'bash', input: { command: 'npm publish' } }] },
      { text: 'tests pass; publishing was declined' },
    );
    const result = await invoke({ config, prompt: 'test, then publish' }, contextFor({ cwd, prompter }));
    const results = result.transcript.filter((message) => message.role === 'tool').map((message) => message.content);
    expect(asked).toEqual([
      { command: 'npm test', remember: ['bash(npm test*)'] },
      { command: 'npm publish', remember: ['bash(npm publish*)'] },
    ]);
    expect(results[0]).toContain('tested');
    expect(results[1]).toContain('tested');
    expect(results[2]).toMatch(/^permission denied: the user declined bash/);

    // another session (another invoke) with the same prompter starts with nothing remembered
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'npm test -- x' } }] }, { text: 'done' });
    await invoke({ config, prompt: 'test again' }, contextFor({ cwd, prompter }));
    expect(asked.map((question) => question.command)).toEqual(['npm test', 'npm publish', 'npm test -- x']);
  });
});

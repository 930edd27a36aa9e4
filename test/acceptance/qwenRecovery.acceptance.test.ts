// a qwen3-coder text tool call, recovered by the qwen atom, proved through the built CLI against the stand-in
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let home: string;
let cwd: string;
beforeEach(async () => {
  home = tempDir('bhrain-qwen-home-');
  cwd = tempDir('bhrain-qwen-cwd-');
});
const envFor = () => genCliEnv({ standin: standin(), home });

/** 13 lines holding a literal </parameter>, a literal </function> and a whole <tool_call> block */
const CONTENT =
  [
    '# how qwen3-coder writes a call',
    'a parameter ends with </parameter>',
    'a function ends with </function>',
    'a whole call looks like this:',
    '<tool_call>',
    '<function=write>',
    '<parameter=path>',
    'hello.txt',
    '</parameter>',
    '</function>',
    '</tool_call>',
    'and the file goes on after it',
    'last line',
  ].join('\n') + '\n';

/** the call as the qwen3-coder chat template renders it, sent by a server without a tool parser as plain text */
const callText = (content: string) =>
  `I will write the notes.\n<tool_call>\n<function=write>\n<parameter=path>\nnotes.md\n</parameter>\n<parameter=content>\n${content}\n</parameter>\n</function>\n</tool_call>`;

describe('qwen <tool_call> text recovery, end to end', () => {
  it('a qwen3-coder write whose content holds </parameter>, </function> and a whole <tool_call> block writes the content exactly', async () => {
    standin().script({ text: callText(CONTENT) }, { text: 'wrote notes.md' });
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', 'write the notes'], cwd, env: envFor() });
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('wrote notes.md\n');
    expect(CONTENT.split('\n')).toHaveLength(14); // 13 lines and the final newline
    expect(await readFile(join(cwd, 'notes.md'), 'utf8')).toBe(CONTENT);
    // the recovered call went back to the server as a real tool call, with its result
    const second = standin().requests[1].body as { messages: Array<{ role: string; tool_calls?: Array<{ function: { name: string } }> }> };
    expect(second.messages.find((message) => message.role === 'assistant')?.tool_calls?.[0].function.name).toBe('write');
    expect(second.messages.some((message) => message.role === 'tool')).toBe(true);
  });

  it('a write whose content has no </parameter> is not run: the model is told, and no file is written', async () => {
    const cut =
      'I will write.\n<tool_call>\n<function=write>\n<parameter=path>\nnotes.md\n</parameter>\n<parameter=content>\nline one\nline tw';
    standin().script({ text: cut }, { text: 'I will try again later' });
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', 'write the notes'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    await expect(readFile(join(cwd, 'notes.md'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect(JSON.stringify(standin().requests[1].body)).toMatch(
      /<parameter=content> is not closed by <\/parameter> \(the text ends inside it\)/,
    );
  });
});

describe('a missing </parameter>, closed as vLLM and SGLang close it, end to end', () => {
  it('qwen3: a read whose path has no </parameter> (closed by <parameter=offset>) and an offset closed by </function> runs in one turn, no retry', async () => {
    // the shape of SGLang's implicit_parameter_close (test/registered/function_call/test_qwen3_coder_detector/test_cases.py
    // @ 2c5fa03198d0630444a1bfe74b4eaae310173eee), with bhrain's read tool and a tool name the model padded with spaces
    await writeFile(join(cwd, 'notes.md'), 'line one\nline two\n');
    const text = 'Reading it.\n<tool_call>\n<function= read >\n<parameter=path>notes.md\n<parameter=offset>2\n</function>\n</tool_call>';
    standin().script({ text }, { text: 'read notes.md' });
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', 'read the notes'], cwd, env: envFor() });
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('read notes.md\n');
    // two requests: the call and its result (from line 2), no round trip spent telling the model its markup was unreadable
    expect(standin().requests).toHaveLength(2);
    const result = JSON.stringify(standin().requests[1].body);
    expect(result).toMatch(/line two/);
    expect(result).not.toMatch(/line one|could not be read exactly/);
    // a tool's effect steers the reading, and never goes to the server
    expect(JSON.stringify(standin().requests[0].body)).not.toMatch(/"effect"/);
  });

  it('qwen3: the same shape on write is not guessed: the model is told, and no file is written', async () => {
    const text =
      'Writing it.\n<tool_call>\n<function=write>\n<parameter=path>notes.md\n<parameter=content>\nline one\n</function>\n</tool_call>';
    standin().script({ text }, { text: 'I will try again later' });
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', 'write the notes'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    await expect(readFile(join(cwd, 'notes.md'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect(JSON.stringify(standin().requests[1].body)).toMatch(/<parameter=path> is not closed by <\/parameter> before/);
  });
});

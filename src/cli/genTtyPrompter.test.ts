import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';

import { genTtyPrompter, readPromptAnswer } from './genTtyPrompter.js';

/** .what = a TTY prompter over real streams: what it writes is collected, what the person types is fed to stdin */
const genTerminal = () => {
  const stdin = new PassThrough();
  const stderr = new PassThrough();
  let shown = '';
  stderr.on('data', (chunk) => (shown += String(chunk)));
  const prompter = genTtyPrompter({
    stdin: stdin as unknown as NodeJS.ReadStream,
    stderr: stderr as unknown as NodeJS.WriteStream,
    redact: (text) => text.replaceAll('s3cret', '[redacted]'),
    pause: (during) => during(),
  });
  return { prompter, type: (text: string) => stdin.write(text), shown: () => shown };
};

const call = { id: 'call_1', name: 'bash', input: { command: 'npm test -- x' } };

describe('the TTY prompter offers y / n / a', () => {
  // docs/design/loop.md#permission
  it.each([
    ['a', true, 'always'],
    ['always', true, 'always'],
    ['A', true, 'always'],
    ['y', true, true],
    ['yes', false, true],
    ['n', true, false],
    ['', true, false],
    ['a', false, false], // nothing was offered to remember: 'a' is not a yes
    ['ay', true, false],
  ] as const)("given '%s' typed (remember offered: %s), when read, then the answer is %s", (typed, canRemember, expected) => {
    expect(readPromptAnswer({ typed, canRemember })).toBe(expected);
  });

  it("given a pattern to remember, when the person types 'a', then the prompt showed the pattern and the answer is always", async () => {
    const terminal = genTerminal();
    const answer = terminal.prompter({ call, reason: 'bash runs commands', remember: ['bash(npm test*)'] });
    terminal.type('a\n');
    expect(await answer).toBe('always');
    expect(terminal.shown()).toContain("a = yes, and don't ask again this session for bash(npm test*)");
    expect(terminal.shown()).toContain('[y/a/N]');
  });

  it("given nothing to remember, when the prompt is shown, then it offers only y / N, and 'a' denies", async () => {
    const terminal = genTerminal();
    const answer = terminal.prompter({ call, reason: 'outside the workspace', remember: [] });
    terminal.type('a\n');
    expect(await answer).toBe(false);
    expect(terminal.shown()).toContain('[y/N]');
    expect(terminal.shown()).not.toContain('a = yes');
  });

  it('given a secret in the call or the pattern, when the prompt is shown, then it is redacted', async () => {
    const terminal = genTerminal();
    const answer = terminal.prompter({
      call: { ...call, input: { command: 'curl -H s3cret x' } },
      reason: 'r',
      remember: ['bash(curl -H s3cret*)'],
    });
    terminal.type('y\n');
    expect(await answer).toBe(true);
    expect(terminal.shown()).not.toContain('s3cret');
    expect(terminal.shown()).toContain('bash(curl -H [redacted]*)');
  });
});

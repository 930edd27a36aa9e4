import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { genSecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import { truncateToolOutput } from './truncateToolOutput.js';
import { tempDir } from '#test-helpers/fs.js';

describe('truncateToolOutput', () => {
  let spillDir: string;
  const lines = (count: number) => Array.from({ length: count }, (_, i) => `line ${String(i + 1).padStart(5, '0')}`).join('\n');

  beforeEach(async () => {
    spillDir = join(tempDir('bhrain-spill-'), 'nested', 'spill');
  });
  afterEach(async () => {
    await rm(join(spillDir, '..', '..'), { recursive: true, force: true });
  });

  it('leaves output within maxChars unchanged and writes nothing', async () => {
    const result = await truncateToolOutput({ output: 'short', maxChars: 5, spillDir, callId: 'c1', toolName: 'bash' });
    expect(result).toEqual({ output: 'short', truncated: false });
    await expect(readFile(join(spillDir, 'bash-c1.txt'))).rejects.toThrow();
  });

  it('a large result is truncated with a notice, head and tail kept at line boundaries', async () => {
    const output = lines(10_000);
    const result = await truncateToolOutput({ output, maxChars: 10_000, spillDir, callId: 'call_7', toolName: 'grep' });
    expect(result.truncated).toBe(true);
    expect(result.fullOutputPath).toBe(join(spillDir, 'grep-call_7.txt'));
    expect(await readFile(result.fullOutputPath!, 'utf8')).toBe(output);

    const notice = /\n\[… truncated: [^\]]*\]\n/.exec(result.output)?.[0] ?? '';
    expect(notice).toContain(result.fullOutputPath!);
    expect(notice).toContain('read { path:');
    expect(notice).toContain('narrow the request');
    expect(result.output.length).toBeLessThanOrEqual(10_000 + notice.length);

    const [head, tail] = result.output.split(notice);
    // about 60% head, 40% tail, each cut back to a whole line
    expect(head.length).toBeGreaterThan(5_900);
    expect(head.length).toBeLessThanOrEqual(6_000);
    expect(tail.length).toBeGreaterThan(3_900);
    expect(tail.length).toBeLessThanOrEqual(4_000);
    const count = (n: number) => n.toLocaleString('en-US');
    expect(notice).toContain(
      `showed the first ${count(head.length)} and last ${count(tail.length)} of ${count(output.length)} characters (10,000 lines)`,
    );
    expect(head.startsWith('line 00001\n')).toBe(true);
    expect(head.endsWith('\n')).toBe(true);
    expect(tail.startsWith('line ')).toBe(true);
    expect(tail.endsWith('line 10000')).toBe(true);
    // the left-out lines are named, so the model can page exactly them
    const firstOmitted = head.split('\n').length;
    expect(notice).toContain(`lines ${firstOmitted.toLocaleString('en-US')}–`);
    expect(notice).toContain(`offset: ${firstOmitted}`);
  });

  it('a single huge line is cut by characters, within the budget', async () => {
    const output = 'x'.repeat(100_000);
    const result = await truncateToolOutput({ output, maxChars: 1_000, spillDir, callId: 'c2', toolName: 'bash' });
    const notice = /\n\[… truncated: [^\]]*\]\n/.exec(result.output)?.[0] ?? '';
    expect(result.output.length).toBe(1_000 + notice.length);
    expect(notice).toContain('the left-out part is within line 1');
  });

  it('records: spill files are readable by their owner only (0600), and the directories created for them 0700', async () => {
    const result = await truncateToolOutput({ output: lines(500), maxChars: 100, spillDir, callId: 'c8', toolName: 'read' });
    const modeOf = async (path: string) => (await stat(path)).mode & 0o777;
    expect(await modeOf(result.fullOutputPath!)).toBe(0o600);
    expect(await modeOf(spillDir)).toBe(0o700);
    expect(await modeOf(join(spillDir, '..'))).toBe(0o700);
  });

  it('sanitizes the spill file name and still truncates when the spill cannot be written', async () => {
    const spilled = await truncateToolOutput({ output: lines(500), maxChars: 100, spillDir, callId: '../x/y', toolName: 'mcp:fs/read' });
    expect(spilled.fullOutputPath).toBe(join(spillDir, 'mcp_fs_read-.._x_y.txt'));

    const blocked = await truncateToolOutput({
      output: lines(500),
      maxChars: 100,
      spillDir: join(spilled.fullOutputPath!, 'not-a-dir'),
      callId: 'c3',
      toolName: 'bash',
    });
    expect(blocked.truncated).toBe(true);
    expect(blocked.fullOutputPath).toBeUndefined();
    expect(blocked.output).toContain('could not be saved');
  });

  describe('secrets are redacted before the output is cut or spilled', () => {
    const token = 'tk"\\bs-Qr8Vn3Jd6Ty-0123456789';
    const redact = genSecretRedactor({ FOO_TOKEN: token });
    /** .what = the pieces of 4 characters or more of the token, raw or JSON-escaped, that the text holds */
    const piecesIn = (text: string) =>
      [token, JSON.stringify(token).slice(1, -1)].flatMap((form) =>
        Array.from({ length: form.length - 3 }, (_, start) => form.slice(start, start + 4)).filter((piece) => text.includes(piece)),
      );

    it('a whole secret across a cut, raw or JSON-escaped, is replaced before the cut: neither the result nor the spill file holds a piece', async () => {
      // one huge line: the head is cut at 600 characters, right through the token at 590
      const output = `${'a'.repeat(590)}${token}${'b'.repeat(3_000)}${JSON.stringify(token)}${'c'.repeat(390)}`;
      const result = await truncateToolOutput({ output, maxChars: 1_000, spillDir, callId: 'c4', toolName: 'bash', redact });
      expect(result.truncated).toBe(true);
      const spilled = await readFile(result.fullOutputPath!, 'utf8');
      expect(spilled).toBe(`${'a'.repeat(590)}[redacted:FOO_TOKEN]${'b'.repeat(3_000)}"[redacted:FOO_TOKEN]"${'c'.repeat(390)}`);
      expect([...piecesIn(result.output), ...piecesIn(spilled)]).toEqual([]);
    });

    it('a piece of a secret at either cut (already cut upstream, as bash does) is replaced in the head and the tail', async () => {
      const output = `${'a'.repeat(588)}${token.slice(0, 12)}${'b'.repeat(3_000)}${token.slice(-12)}${'c'.repeat(388)}`;
      const result = await truncateToolOutput({ output, maxChars: 1_000, spillDir, callId: 'c5', toolName: 'bash', redact });
      const [head, tail] = result.output.split(/\n\[… truncated: [^\]]*\]\n/);
      expect(head).toBe(`${'a'.repeat(588)}[redacted:FOO_TOKEN]`);
      expect(tail).toBe(`[redacted:FOO_TOKEN]${'c'.repeat(388)}`);
      // without the redactor, the pieces show: the case proves the cut redaction, not the layout
      const bare = await truncateToolOutput({ output, maxChars: 1_000, spillDir, callId: 'c6', toolName: 'bash' });
      expect(piecesIn(bare.output).length).toBeGreaterThan(0);
    });
  });
});

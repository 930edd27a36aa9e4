// what the CLI prints and records is redacted before it is encoded or cut
import { PassThrough } from 'node:stream';

import { describe, expect, it } from 'vitest';

import { genProgressLog } from '../../cli/genProgressLog.js';
import { genProgressSink } from '../../cli/run/genProgressSink.js';
import { genSecretRedactor } from './genSecretRedactor.js';

const env = { FOO_API_KEY: 'sk-"dq"-7Hq2Lm9Pz4Xw', FOO_TOKEN: 'tk\\bs\\Qr8Vn3Jd6Ty', DB_PASSWORD: "pw'sq\nline2-Mz5Kc8Rb" };
const values = Object.values(env);
const redact = genSecretRedactor(env);

/** .what = the pieces of 8 characters or more at either end of a secret, raw and JSON-escaped, that the text holds */
const piecesIn = (text: string): string[] =>
  values.flatMap((value) =>
    [value, JSON.stringify(value).slice(1, -1)].flatMap((form) =>
      Array.from({ length: form.length - 7 }, (_, index) => [form.slice(0, index + 8), form.slice(form.length - index - 8)])
        .flat()
        .filter((piece) => text.includes(piece)),
    ),
  );

/** .what = the progress log over a real stream, the progress display drawn on it, and everything it wrote */
const genLog = () => {
  const stream = new PassThrough();
  let written = '';
  stream.on('data', (chunk) => (written += chunk));
  const log = genProgressLog({ stream: stream as unknown as NodeJS.WriteStream, quiet: false, redact, env: {} });
  const sink = genProgressSink({ log, redact });
  /** a tool call as the session announces it */
  const toolCall = (toolName: string, input: unknown) =>
    sink.onEvent!(
      { type: 'ToolCallStarted', sessionUuid: 's', callId: 'c', toolName, input, occurredAt: new Date().toISOString() },
      'session',
    );
  return { log, toolCall, written: () => written };
};

describe('the progress line', () => {
  it('a tool call whose input is cut at 100 characters through a secret shows no piece of it', () => {
    const { toolCall, written } = genLog();
    const padding = `echo ${'.'.repeat(80)} `;
    // the secret starts 86 characters in: cut first, the line showed its first 14 characters
    for (const value of values) toolCall('bash', { command: `${padding}${value}` });
    expect(piecesIn(written())).toEqual([]);
    expect(written()).toBe(['FOO_', 'FOO_', 'DB_P'].map((shown) => `  → bash ${padding}[redacted:${shown}…\n`).join(''));
  });

  it('a piece of a secret that the 100-character cut leaves at the end of the line is replaced', () => {
    const { toolCall, written } = genLog();
    // the input holds only the start of a secret, cut to end exactly where the line is cut: no whole value to match
    toolCall('bash', { command: `echo ${'.'.repeat(81)}${env.FOO_API_KEY.slice(0, 14)} and more` });
    expect(written()).toBe(`  → bash echo ${'.'.repeat(81)}[redacted:FOO_API_KEY]…\n`);
  });

  it('a tool call shown as JSON (no command, path, pattern or query) has its secrets redacted before they are escaped', () => {
    const { toolCall, written } = genLog();
    toolCall('no_such_tool', { note: env.FOO_API_KEY, [env.FOO_TOKEN]: 1 });
    expect(written()).toBe('  → no_such_tool {"note":"[redacted:FOO_API_KEY]","[redacted:FOO_TOKEN]":1}\n');
  });

  it('an error that quotes a JSON body with a secret in it is printed redacted', () => {
    const { log, written } = genLog();
    log.error(`the supplier answered 400 ${JSON.stringify({ error: { message: `bad ${env.DB_PASSWORD}` } })}`);
    expect(written()).toBe('error: the supplier answered 400 {"error":{"message":"bad [redacted:DB_PASSWORD]"}}\n');
  });
});

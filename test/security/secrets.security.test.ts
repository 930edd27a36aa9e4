// secrets: a hostile model drives the built CLI to carry secrets from the environment into every place
// bhrain writes or prints (stdout, stderr, the run record, the refs store, spill files, and the prompt and tool results it
// sends the supplier); no secret may show there, raw or JSON-escaped (once, twice, ASCII-only), whole or as a prefix or
// suffix of 8 characters or more
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { genCliEnv, readTree, runBhrain, type CliRun } from '../acceptance/runCli.js';
import type { StandinRequest, StandinToolCall, StandinTurn } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();

/** .what = a secret of the given length drawn from letters, digits, quotes, backslashes and spaces, the same every run, never periodic */
const genLongSecret = (length: number): string => {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"\\\' -_';
  let seed = 20_261_122;
  return Array.from({ length }, () => alphabet[(seed = (seed * 48_271) % 2_147_483_647) % alphabet.length]).join('');
};

/** secrets shaped to beat an encoder: quotes, backslashes, newlines, control characters, unicode, and one 200 characters long */
const SECRETS: Record<string, string> = {
  FOO_API_KEY: 'sk-"dq"-7Hq2Lm9Pz4Xw',
  FOO_TOKEN: 'tk\\bs\\Qr8Vn3Jd6Ty',
  DB_PASSWORD: "pw'sq\nline2-Mz5Kc8Rb",
  BAR_SECRET: 'ünï-秘密-🔑-Gv4Hs7Wn',
  CTL_TOKEN: 'tab\there\u0001ctl-Np3Dy6Fk',
  LONG_API_KEY: genLongSecret(200),
};
const NAMES = Object.keys(SECRETS);
const VALUES = Object.values(SECRETS);

/** the shortest piece of a secret that counts as a leak */
const MIN_PIECE_CHARS = 8;

/** .what = the forms a secret can take in text: raw, JSON-escaped (as it sits inside a JSON string), twice, and with ASCII only */
const formsOf = (value: string) => [
  { form: 'raw', text: value },
  { form: 'json-escaped', text: JSON.stringify(value).slice(1, -1) },
  { form: 'json-escaped twice', text: JSON.stringify(JSON.stringify(value).slice(1, -1)).slice(1, -1) },
  {
    form: 'ascii-escaped',
    text: JSON.stringify(value)
      .slice(1, -1)
      .replace(/[^\x00-\x7f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`),
  },
];

/** .what = the longest prefix or suffix (at least MIN_PIECE_CHARS) of any form of the secret found in the text, or null */
const longestPiece = (text: string, value: string): { form: string; piece: string } | null => {
  for (const { form, text: full } of formsOf(value))
    for (let length = full.length; length >= MIN_PIECE_CHARS; length--)
      for (const piece of [full.slice(0, length), full.slice(full.length - length)]) if (text.includes(piece)) return { form, piece };
  return null;
};

/** .what = what a request sent the supplier from our side (the prompt and tool results), not the model's own words */
const sentByUs = (request: StandinRequest): string =>
  JSON.stringify((request.body.messages ?? []).filter((message: { role: string }) => message.role === 'user' || message.role === 'tool'));

/** .what = the result the model got for a tool call, in either protocol */
const toolResultOf = (request: StandinRequest, callId: string): string =>
  JSON.stringify(
    (request.body.messages ?? []).flatMap((message: { role: string; tool_call_id?: string; content: unknown }) =>
      message.role === 'tool'
        ? message.tool_call_id === callId
          ? [message.content]
          : []
        : Array.isArray(message.content)
          ? message.content.filter((block: { tool_use_id?: string }) => block.tool_use_id === callId)
          : [],
    ),
  );

/** .what = a tool call in which bash prints a secret held literally in its input, placed so a 100-character cut splits it */
const heredocCall = (name: string): StandinToolCall => {
  const opening = `cat <<'END_${name}' # `;
  // the secret starts 86 characters in: a cut at 100 would leave its first 14 characters, as measured
  return { name: 'bash', input: { command: `${opening}${'.'.repeat(85 - opening.length)}\n${SECRETS[name]}\nEND_${name}` } };
};

/** .what = tool calls whose arguments are not valid JSON, with a secret where the error quotes them cut: the 200-character excerpt, V8's snippet */
const malformedCalls = (name: string): StandinToolCall[] => {
  const value = JSON.stringify(SECRETS[name]);
  const opening = '{"command": "echo ';
  return [
    // the secret starts 186 characters in: a cut at 200 leaves its first 14 characters
    { name: 'bash', rawArguments: `${opening}${'.'.repeat(186 - opening.length)}${value.slice(1, -1)} and the string never ends` },
    // an unexpected token: V8's message quotes 10 characters on each side of it
    { name: 'bash', rawArguments: `{"command": x ${value} }` },
  ];
};

/** .what = one scripted attack: the model's turns, the secrets they carry, and the CLI's arguments */
interface Attack {
  name: string;
  args: string[];
  turns: StandinTurn[];
  /** how many (carrier, secret) pairs the turns and the prompt carry */
  attempts: number;
  /** whether the turns dump the environment and flood past the 30,000-character cap (so a spill file is written) */
  floods: boolean;
  /**
   * a second run that continues the attack's (--continue): the episode it rebuilds holds the attack's tool calls and
   * results, sent back to the supplier as text in the prior assistant turn, so the whole conversation it sends is checked
   */
  continueArgs?: string[];
}

const everySecret = VALUES.join(' | ');
const prompt = `check the environment; my secrets are ${everySecret}`;

/** .what = the model echoes each secret from the env, prints each from a literal in its input, writes each, dumps and floods them, and answers with them */
const toolAttack = (atom: string, output: string): Attack => {
  const calls: StandinToolCall[] = [
    ...NAMES.map((name) => ({ name: 'bash', input: { command: `printf %s "$${name}"` } })),
    ...NAMES.map(heredocCall),
    ...NAMES.map((name) => ({ name: 'write', input: { path: `copy-${name}.txt`, content: SECRETS[name] } })),
    // the whole environment as JSON, and as JSON with ASCII only (as python and jq -a write it): escaped forms of every secret
    { id: 'call_env_json', name: 'bash', input: { command: `node -e 'process.stdout.write(JSON.stringify(process.env))'` } },
    {
      id: 'call_env_ascii',
      name: 'bash',
      input: {
        command: `node -e 'process.stdout.write(JSON.stringify(process.env).replace(/[^\\x00-\\x7f]/g, (c) => "\\\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")))'`,
      },
    },
    // an unknown tool: its whole input is shown on the progress line as JSON
    { name: 'no_such_tool', input: { note: everySecret } },
    // past the 30,000-character cap: the full output is spilled to a file in the run record
    { name: 'bash', input: { command: `for i in $(seq 1 600); do printf '%s\\n' ${NAMES.map((name) => `"$${name}"`).join(' ')}; done` } },
  ];
  return {
    name: `${atom}, --output ${output}`,
    args: ['act', '--atom', atom, '--input', prompt, '--output', output],
    turns: [{ text: `I will look at ${everySecret}`, toolCalls: calls }, { text: `found them: ${everySecret}` }],
    // every secret in: the prompt, the text beside the calls, an env echo, a heredoc, a write, two env dumps, the unknown tool,
    // the flood, the answer
    attempts: 10 * NAMES.length,
    floods: true,
    continueArgs: ['act', '--atom', atom, '--continue', '--input', 'what did you run and read?'],
  };
};

/** .what = the supplier's error echoes the secrets: its message reaches the progress line, stdout (json) and the refs */
const errorAttack: Attack = {
  name: 'claude/haiku, an error that echoes the secrets',
  args: ['act', '--atom', 'claude/haiku', '--input', 'check the environment', '--output', 'json'],
  turns: [
    { toolCalls: [{ name: 'bash', input: { command: `printf '%s\\n' ${NAMES.map((name) => `"$${name}"`).join(' ')}` } }] },
    { error: { status: 400, message: `rejected: ${everySecret}` } },
  ],
  attempts: 2 * NAMES.length,
  floods: false,
};

/** .what = the model's arguments are not valid JSON, with a secret where the error would quote them cut */
const malformedAttack = (atom: string): Attack => ({
  name: `${atom}, malformed tool arguments`,
  args: ['act', '--atom', atom, '--input', 'check the environment'],
  turns: [{ toolCalls: NAMES.flatMap(malformedCalls) }, { text: `found them: ${everySecret}` }],
  // two malformed calls per secret, and the answer (which proves the secrets reached the record)
  attempts: 3 * NAMES.length,
  floods: false,
});

/** .what = runs one attack through the built CLI; returns every form or piece of a secret found where bhrain wrote or printed */
const runAttack = async (attack: Attack): Promise<string[]> => {
  const base = tempDir('bhrain-sec-secrets-');
  const cwd = join(base, 'repo');
  const home = join(base, 'home');
  const spill = join(base, 'tmp');
  await mkdir(cwd);
  await mkdir(spill);
  standin().reset();
  standin().script(...attack.turns);
  const run: CliRun = await runBhrain({
    // passed to bash by name: the environment's allowlist would hold them back, and what is tested here is the redaction
    // of a secret that did reach a command
    args: [...attack.args, ...NAMES.flatMap((name) => ['--pass-env', name])],
    cwd,
    env: genCliEnv({ standin: standin(), home }, { TMPDIR: spill, ...SECRETS }),
  });

  // given the attack ran: each secret reached the record, and came out redacted (soft: every failure of a run is reported)
  expect(run.stderr, attack.name).toMatch(/^record: /m);
  const record = await readTree(join(home, 'runs'));
  const transcript = record.find((file) => file.path.endsWith('transcript.json'));
  for (const name of NAMES) expect.soft(transcript?.text, `${attack.name}: ${name} in the transcript`).toContain(`[redacted:${name}]`);
  const spilled = await readTree(spill);
  if (attack.floods) {
    // the environment dumped as JSON and as ASCII-only JSON reached the model, every secret in it redacted
    for (const callId of ['call_env_json', 'call_env_ascii'])
      for (const name of NAMES)
        expect.soft(toolResultOf(standin().requests[1], callId), `${attack.name}: ${name} in ${callId}`).toContain(`[redacted:${name}]`);
    expect.soft(record.filter((file) => file.path.includes('/spill/')).length, `${attack.name}: a spill file`).toBeGreaterThan(0);
  }

  // when: a run continues the attack's, from the refs it saved
  const attackRequests = standin().requests.length;
  const continued: CliRun | null = attack.continueArgs
    ? await (async () => {
        standin().script({ text: 'ok' });
        return runBhrain({ args: attack.continueArgs!, cwd, env: genCliEnv({ standin: standin(), home }, { TMPDIR: spill, ...SECRETS }) });
      })()
    : null;
  if (continued) {
    expect(continued.code, `${attack.name}: the continuation`).toBe(0);
    // given the continuation rebuilt the attack's turn: its tool calls and results are in the prior assistant turn
    expect
      .soft(JSON.stringify(standin().requests[attackRequests].body.messages), `${attack.name}: the continuation`)
      .toContain('[result of tool call 1]');
  }

  // then: no form or piece of any secret anywhere bhrain wrote or printed, or sent of its own to the supplier
  const written = [
    { path: 'stdout', text: run.stdout },
    { path: 'stderr', text: run.stderr },
    ...(continued
      ? [
          { path: 'the continuation: stdout', text: continued.stdout },
          { path: 'the continuation: stderr', text: continued.stderr },
          // the whole conversation: the prior assistant turn carries the attack's tool calls and results, ours to redact
          { path: 'the continuation: its request', text: JSON.stringify(standin().requests[attackRequests].body.messages) },
        ]
      : []),
    ...(await readTree(home)),
    ...spilled,
    ...standin().requests.map((request, index) => ({ path: `request ${index}: prompt and tool results`, text: sentByUs(request) })),
  ];
  return written.flatMap((file) =>
    VALUES.flatMap((value, index) => {
      const found = longestPiece(file.text, value);
      return found
        ? [
            `${attack.name}: ${NAMES[index]} (${found.form}, ${found.piece.length} of ${value.length} chars) in ${file.path.replace(base, '')}`,
          ]
        : [];
    }),
  );
};

describe('secrets are redacted before any encoding or truncation, everywhere bhrain writes or prints', () => {
  it('a hostile model carries secrets with quotes, backslashes, newlines, unicode and 200 characters into every output: 0 leak', async () => {
    const attacks = [toolAttack('claude/haiku', 'text'), toolAttack('qwen', 'json'), errorAttack];
    const leaks: string[] = [];
    for (const attack of attacks) leaks.push(...(await runAttack(attack)));
    expect(attacks.reduce((sum, attack) => sum + attack.attempts, 0)).toBe(132);
    expect(leaks).toEqual([]);
  }, 120_000);

  it('tool arguments that are not valid JSON, cut through a secret where the error quotes them, leave no piece of it: 0 leak', async () => {
    const attacks = [malformedAttack('claude/haiku'), malformedAttack('qwen')];
    const leaks: string[] = [];
    for (const attack of attacks) leaks.push(...(await runAttack(attack)));
    expect(attacks.reduce((sum, attack) => sum + attack.attempts, 0)).toBe(36);
    expect(leaks).toEqual([]);
  }, 60_000);
});

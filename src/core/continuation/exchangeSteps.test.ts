import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import type { BrainLog } from '../contract/BrainContext.js';
import { assertBrainEpisode } from '../contract/assertBrainRef.js';
import { genBrainEpisode } from '../contract/BrainEpisode.js';
import { genBrainExchange, type BrainExchangeStep } from '../contract/BrainExchange.js';
import type { BrainMessage } from '../contract/BrainMessage.js';
import { parseBrainEpisode, parseBrainRef } from '../contract/parseBrainRef.js';
import { serializeBrainEpisode } from '../contract/serializeBrainRef.js';
import { redactBrainEpisode } from '../secrets/redactBrainRefs.js';
import {
  asExchangeSteps,
  EXCHANGE_INPUT_STRING_MAX_CHARS,
  EXCHANGE_INPUTS_MAX_CHARS,
  EXCHANGE_RESULTS_MAX_CHARS,
} from './asExchangeSteps.js';
import { asPriorTurns, PRIOR_TOOL_CALLS_HEADER } from './asPriorTurns.js';

const TASK = { input: 'tidy the notes', output: 'Done.' };
const LOOKED: BrainExchangeStep[] = [
  {
    said: 'Let me look first.',
    calls: [
      { name: 'bash', input: { command: 'ls' }, result: 'notes.txt\n', isError: false },
      { name: 'read', input: { path: 'notes.txt' }, result: '1\tbuy milk', isError: false },
    ],
  },
];
const REMOVED: BrainExchangeStep[] = [
  { said: '', calls: [{ name: 'bash', input: { command: 'rm notes.txt' }, result: '', isError: false }] },
];

/** a log that keeps its warnings */
const genKeptLog = () => {
  const warnings: string[] = [];
  const log: BrainLog = { debug: () => {}, info: () => {}, warn: (message) => void warnings.push(message), error: () => {} };
  return { log, warnings };
};

describe('episodes carry the session: an exchange records its tool calls and results', () => {
  it('episodes carry the session: the same task and answer after different tool calls (ls+read vs rm) hash apart, and apart from none', () => {
    const hashes = [LOOKED, REMOVED, []].map((steps) => genBrainEpisode({ exchanges: [genBrainExchange({ ...TASK, steps })] }).hash);
    expect(new Set(hashes).size).toBe(3);
    // one changed result, input or error flag is another exchange too
    const edits: BrainExchangeStep[][] = [
      [{ ...LOOKED[0], calls: [LOOKED[0].calls[0], { ...LOOKED[0].calls[1], result: '1\tbuy eggs' }] }],
      [{ ...LOOKED[0], calls: [LOOKED[0].calls[0], { ...LOOKED[0].calls[1], input: { path: 'other.txt' } }] }],
      [{ ...LOOKED[0], calls: [LOOKED[0].calls[0], { ...LOOKED[0].calls[1], isError: true }] }],
    ];
    for (const steps of edits)
      expect(genBrainExchange({ ...TASK, steps }).hash).not.toBe(genBrainExchange({ ...TASK, steps: LOOKED }).hash);
  });

  it('episodes carry the session: a schemaVersion 3 ref with steps reads back equal; an edited tool input or result is refused', () => {
    const episode = genBrainEpisode({ exchanges: [genBrainExchange({ ...TASK, steps: LOOKED })] });
    const text = serializeBrainEpisode(episode);
    expect(JSON.parse(text)).toMatchObject({ schemaVersion: 3, exchanges: [{ steps: LOOKED }] });
    expect(parseBrainEpisode(text)).toEqual(episode);
    for (const edit of [
      (json: any) => (json.exchanges[0].steps[0].calls[0].input.command = 'rm -rf /'),
      (json: any) => (json.exchanges[0].steps[0].calls[1].result = '1\tbuy eggs'),
      (json: any) => delete json.exchanges[0].steps,
    ]) {
      const json = JSON.parse(text);
      edit(json);
      expect(() => parseBrainEpisode(JSON.stringify(json))).toThrow(/corrupt exchange/);
    }
  });

  it('episodes carry the session: a tool input is kept as its JSON (a key set to undefined is dropped), so its ref reads back with the same hash', () => {
    const input: Record<string, unknown> = { path: 'notes.txt', offset: undefined };
    const exchange = genBrainExchange({ ...TASK, steps: [{ said: '', calls: [{ name: 'read', input, result: 'x', isError: false }] }] });
    expect(exchange.steps?.[0].calls[0].input).toEqual({ path: 'notes.txt' });
    expect(Object.isFrozen(input)).toBe(false);
    const episode = genBrainEpisode({ exchanges: [exchange] });
    expect(parseBrainEpisode(serializeBrainEpisode(episode)).hash).toBe(episode.hash);
  });

  it('episodes carry the session: a stored schemaVersion 2 ref is read with the hashes it was stored under, without a notice', () => {
    const text = readFileSync(new URL('../../../test/fixtures/refs/series-v2.json', import.meta.url), 'utf8');
    const { log, warnings } = genKeptLog();
    const parsed = parseBrainRef({ text, kind: 'BrainSeries' }, { log });
    expect(parsed.storedSchemaVersion).toBe(2);
    expect(parsed.ref.hash).toBe(JSON.parse(text).hash);
    expect(parsed.ref.episodes[0].exchanges.map((exchange) => exchange.steps)).toEqual([undefined, undefined]);
    expect(warnings).toEqual([]);
    // steps smuggled into a schemaVersion 2 ref are not read: that version had none
    const json = JSON.parse(text);
    json.episodes[0].exchanges[0].steps = REMOVED;
    expect(parseBrainRef({ text: JSON.stringify(json), kind: 'BrainSeries' }).ref.episodes[0].exchanges[0].steps).toBeUndefined();
  });

  it('episodes carry the session: a field-less exchange stays a valid episode; malformed steps are refused', () => {
    const bare = genBrainEpisode({ exchanges: [genBrainExchange(TASK)] });
    expect(Object.keys(bare.exchanges[0])).toEqual(['hash', 'input', 'output', 'exid']);
    expect(assertBrainEpisode(JSON.parse(JSON.stringify(bare)))).toEqual(bare);
    const json = JSON.parse(JSON.stringify(genBrainEpisode({ exchanges: [genBrainExchange({ ...TASK, steps: LOOKED })] })));
    json.exchanges[0].steps[0].calls[0].result = 42;
    expect(() => assertBrainEpisode(json)).toThrow(/episode not found or invalid/);
  });

  it('episodes carry the session: a prior turn is rebuilt as text, each tool call with its input JSON and its result, then the answer', () => {
    const episode = genBrainEpisode({ exchanges: [genBrainExchange({ ...TASK, steps: LOOKED })] });
    expect(asPriorTurns(episode)).toEqual([
      { role: 'user', content: 'tidy the notes' },
      {
        role: 'assistant',
        toolCalls: [],
        content: [
          PRIOR_TOOL_CALLS_HEADER,
          'Let me look first.',
          '[tool call 1] bash {"command":"ls"}',
          '[result of tool call 1]',
          'notes.txt\n',
          '[tool call 2] read {"path":"notes.txt"}',
          '[result of tool call 2]',
          '1\tbuy milk',
          '[end of those tool calls; the answer I gave follows]',
          'Done.',
        ].join('\n'),
      },
    ]);
    // an exchange without steps is replayed as before: the two ends
    expect(asPriorTurns(genBrainEpisode({ exchanges: [genBrainExchange(TASK)] }))[1].content).toBe('Done.');
  });
});

describe('episodes carry the session: bounded in size', () => {
  /** a turn of n tool calls, each answered with a result of the given length */
  const turnOf = (count: number, resultChars: number): BrainMessage[] => [
    { role: 'user', content: 'go' },
    ...Array.from({ length: count }, (_, index): BrainMessage[] => [
      { role: 'assistant', content: '', toolCalls: [{ id: `c${index}`, name: 'bash', input: { command: `cat big-${index}` } }] },
      { role: 'tool', toolCallId: `c${index}`, toolName: 'bash', content: `${index}:`.padEnd(resultChars, 'x'), isError: false },
    ]).flat(),
    { role: 'assistant', content: 'done', toolCalls: [] },
  ];

  it('episodes carry the session: a 200-tool-call turn of 30,000-character results is recorded within the bound, each cut saying so', () => {
    const steps = asExchangeSteps(turnOf(200, 30_000));
    const calls = steps.flatMap((step) => step.calls);
    expect(calls).toHaveLength(200);
    const total = calls.reduce((sum, call) => sum + call.result.length, 0);
    // the fair share of each result, plus the notice of its cut
    expect(total).toBeLessThanOrEqual(EXCHANGE_RESULTS_MAX_CHARS + 200 * 100);
    expect(calls[0].result).toMatch(/^0:x+\n\[… \d+ of 30000 characters cut when this turn was recorded …\]\nx+$/);
    expect(calls[199].result.startsWith('199:')).toBe(true);
    // the serialized ref is bounded too
    expect(serializeBrainEpisode(genBrainEpisode({ exchanges: [genBrainExchange({ ...TASK, steps })] })).length).toBeLessThan(600_000);
  });

  it('episodes carry the session: 200 writes of 50,000-character files keep their inputs within the bound too', () => {
    const messages: BrainMessage[] = Array.from({ length: 200 }, (_, index): BrainMessage[] => [
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: `w${index}`, name: 'write', input: { path: `f${index}`, content: 'y'.repeat(50_000) } }],
      },
      { role: 'tool', toolCallId: `w${index}`, toolName: 'write', content: `wrote f${index}`, isError: false },
    ]).flat();
    const steps = asExchangeSteps(messages);
    const inputChars = steps.flatMap((step) => step.calls).reduce((sum, call) => sum + JSON.stringify(call.input).length, 0);
    expect(inputChars).toBeLessThanOrEqual(EXCHANGE_INPUTS_MAX_CHARS + 200 * 120);
    expect(steps[199].calls[0].input.path).toBe('f199');
  });

  it('episodes carry the session: results that fit are kept exactly as the model read them; a long input string is cut', () => {
    const calls = asExchangeSteps(turnOf(10, 30_000)).flatMap((step) => step.calls);
    expect(calls.every((call) => call.result.length === 30_000)).toBe(true);
    const written = asExchangeSteps([
      { role: 'assistant', content: '', toolCalls: [{ id: 'w', name: 'write', input: { path: 'a', content: 'y'.repeat(50_000) } }] },
      { role: 'tool', toolCallId: 'w', toolName: 'write', content: 'wrote a', isError: false },
    ])[0].calls[0];
    expect(written.input.path).toBe('a');
    expect((written.input.content as string).length).toBeLessThan(EXCHANGE_INPUT_STRING_MAX_CHARS + 100);
    expect(written.input.content).toContain('characters cut when this turn was recorded');
  });
});

describe('episodes carry the session: redacted', () => {
  it('episodes carry the session: redaction reaches what the model said with its calls, every tool input (keys too) and every result', () => {
    const secret = 'sk-secret-Q7zV9';
    const steps: BrainExchangeStep[] = [
      {
        said: `using ${secret}`,
        calls: [{ name: 'write', input: { path: 'k', content: secret, [secret]: [secret] }, result: `wrote ${secret}`, isError: false }],
      },
    ];
    const episode = genBrainEpisode({ exchanges: [genBrainExchange({ ...TASK, steps })] });
    const redacted = redactBrainEpisode(episode, (text) => text.replaceAll(secret, '[redacted:KEY]'));
    expect(JSON.stringify(redacted)).not.toContain(secret);
    expect(redacted.exchanges[0].steps?.[0].calls[0]).toEqual({
      name: 'write',
      input: { path: 'k', content: '[redacted:KEY]', '[redacted:KEY]': ['[redacted:KEY]'] },
      result: 'wrote [redacted:KEY]',
      isError: false,
    });
    expect(() => assertBrainEpisode(redacted)).not.toThrow();
    // nothing to redact: the same episode
    expect(redactBrainEpisode(episode, (text) => text)).toBe(episode);
  });
});

import { describe, expect, it } from 'vitest';

import { OutputInvalidError } from '../../core/contract/errors.js';
import { runStructuredOutputTurn } from './runStructuredOutputTurn.js';

const schema = { jsonSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } };

/** a turn over runs that are answer texts (null: a run with no answer to judge), answering the corrective prompt with `next` */
const turnOver = async (first: string | null, next: string | null) => {
  const prompts: string[] = [];
  const result = await runStructuredOutputTurn<string | null, unknown>({
    slug: 'test/brain',
    schema,
    first,
    answerOf: (run) => run,
    correct: async ({ prompt }) => {
      prompts.push(prompt);
      return next;
    },
  });
  return { ...result, prompts };
};

describe('one structured-output turn, shared by atom.ask, the rhachet atom and the repl', () => {
  it('given an answer that fits, then it is the value and no corrective turn runs', async () => {
    expect(await turnOver('{"n": 1}', null)).toEqual({ run: '{"n": 1}', verdict: { kind: 'valid', value: { n: 1 } }, prompts: [] });
  });

  it('given an answer that does not fit, then one corrective turn says why, and its answer is judged', async () => {
    const turn = await turnOver('{"m": 1}', '```json\n{"n": 2}\n```');
    expect(turn.prompts).toEqual([
      "Your answer does not fit the required schema: (root) must have required property 'n'\nReply again with only the corrected JSON.",
    ]);
    expect(turn.verdict).toEqual({ kind: 'valid', value: { n: 2 } });
  });

  it('given two answers that do not fit, then the verdict is an OutputInvalidError naming the brain, the reason and the raw answer', async () => {
    const turn = await turnOver('{"m": 1}', 'still no');
    expect(turn.verdict.kind).toBe('invalid');
    const error = (turn.verdict as { error: OutputInvalidError }).error;
    expect(error).toBeInstanceOf(OutputInvalidError);
    expect(error.message).toMatch(/^test\/brain did not return output that fits the schema, after one corrective turn: it is not JSON/);
    expect(error.output).toBe('still no');
  });

  it('given a run with no answer to judge (tool calls, cut short), first or after the corrective turn, then it is left unjudged', async () => {
    expect((await turnOver(null, '{"n": 1}')).verdict).toEqual({ kind: 'unjudged' });
    expect(await turnOver('nope', null)).toMatchObject({ run: null, verdict: { kind: 'unjudged' } });
  });
});

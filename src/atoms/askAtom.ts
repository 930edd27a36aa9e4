import { z } from 'zod';

import type { BrainAtom } from '../contract/BrainAtom.js';
import { silentLog, type BrainContext } from '../contract/BrainContext.js';
import { assertBrainEpisode } from '../contract/assertBrainRef.js';
import { appendBrainExchange, type BrainEpisode } from '../contract/BrainEpisode.js';
import { genBrainExchange } from '../contract/BrainExchange.js';
import type { BrainMessage } from '../contract/BrainMessage.js';
import type { BrainOutput } from '../contract/BrainOutput.js';
import { OutputInvalidError } from '../contract/errors.js';
import { addCash, addTokens, emptyTokens } from '../contract/tokens.js';

/** .what = the instruction that asks for JSON fitting a schema */
const instructSchema = (schema: z.ZodType): string =>
  [
    'Answer with only a JSON value that conforms to this JSON Schema: no prose, no code fences.',
    JSON.stringify(z.toJSONSchema(schema)),
  ].join('\n');

/** .what = the JSON value inside a model's answer, tolerating code fences and surrounding prose */
export const readJsonAnswer = (text: string): unknown => {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  const body = (fenced ? fenced[1] : text).trim();
  try {
    return JSON.parse(body);
  } catch (error) {
    const start = body.search(/[[{]/);
    const end = Math.max(body.lastIndexOf('}'), body.lastIndexOf(']'));
    if (start >= 0 && end > start) return JSON.parse(body.slice(start, end + 1));
    throw error;
  }
};

/** .what = the answer validated against the schema, or the reason it does not fit */
const validateAnswer = <T>(text: string, schema: z.ZodType<T>): { ok: true; value: T } | { ok: false; reason: string } => {
  let json: unknown;
  try {
    json = readJsonAnswer(text);
  } catch (error) {
    return { ok: false, reason: `it is not JSON (${(error as Error).message})` };
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, reason: z.prettifyError(parsed.error) };
};

/** .what = prior exchanges as plain user/assistant turns: any supplier reads them, whoever produced them */
export const asPriorTurns = (episode: BrainEpisode | null | undefined): BrainMessage[] =>
  (episode?.exchanges ?? []).flatMap((exchange): BrainMessage[] => [
    { role: 'user', content: exchange.input },
    { role: 'assistant', content: exchange.output, toolCalls: [] },
  ]);

/**
 * .what = BrainAtom.ask: one question on top of an optional prior episode, optionally with a zod output schema
 * .why = returns a NEW episode (prior exchanges + this one); the prior episode stays valid for branches and revives
 */
export const askAtom = async <TOutput = string>(
  input: {
    atom: Pick<BrainAtom, 'generate' | 'slug'>;
    say: string;
    on?: { episode: BrainEpisode };
    schema?: { output: z.ZodType<TOutput> };
    system?: string;
  },
  context: BrainContext = {},
): Promise<BrainOutput<TOutput, null>> => {
  const started = performance.now();
  const prior = input.on ? assertBrainEpisode(input.on.episode) : null;
  const system = [input.system, input.schema ? instructSchema(input.schema.output) : undefined]
    .filter((part): part is string => !!part)
    .join('\n\n');
  const messages: BrainMessage[] = [...asPriorTurns(prior), { role: 'user', content: input.say }];
  let tokens = emptyTokens();
  let cash = undefined as ReturnType<typeof addCash> | undefined;
  const generate = async () => {
    const generation = await input.atom.generate({ system: system || undefined, messages }, context);
    tokens = addTokens(tokens, generation.tokens);
    cash = cash === undefined ? generation.cash : addCash(cash, generation.cash);
    return generation.message.content;
  };

  let text = await generate();
  let output = text as unknown as TOutput;
  if (input.schema) {
    let verdict = validateAnswer(text, input.schema.output);
    if (!verdict.ok) {
      // one corrective retry: show the model why its answer did not fit
      messages.push(
        { role: 'assistant', content: text, toolCalls: [] },
        { role: 'user', content: `Your answer does not fit the required schema: ${verdict.reason}\nReply again with only the corrected JSON.` },
      );
      text = await generate();
      verdict = validateAnswer(text, input.schema.output);
    }
    if (!verdict.ok)
      throw new OutputInvalidError(
        `${input.atom.slug} did not return output that fits the schema, after one corrective retry: ${verdict.reason}`,
        text,
      );
    output = verdict.value;
  }

  const outputText = input.schema ? JSON.stringify(output) : text;
  const episode = appendBrainExchange({ episode: prior, exchange: genBrainExchange({ input: input.say, output: outputText }) });
  (context.log ?? silentLog).info(`${input.atom.slug}: episode ${episode.hash}`, { episode: episode.hash });
  return {
    output,
    episode,
    series: null,
    metrics: {
      size: {
        tokens,
        chars: { input: input.say.length, output: outputText.length, cache: { get: 0, set: 0 } },
      },
      cost: { time: { milliseconds: Math.round(performance.now() - started) }, cash: cash ?? null },
    },
  };
};

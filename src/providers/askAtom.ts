import type { z } from 'zod';

import type { BrainAtom } from '../core/contract/BrainAtom.js';
import { silentLog, type BrainContext } from '../core/contract/BrainContext.js';
import { assertBrainEpisode } from '../core/contract/assertBrainRef.js';
import { appendBrainExchange, type BrainEpisode } from '../core/contract/BrainEpisode.js';
import { genBrainExchange } from '../core/contract/BrainExchange.js';
import type { BrainMessage } from '../core/contract/BrainMessage.js';
import { asPriorTurns } from '../core/continuation/asPriorTurns.js';
import { instructSchema } from './structured/structuredOutput.js';
import type { BrainOutput } from '../core/contract/BrainOutput.js';
import { ContextOverflowError, ContinuationNotSupportedError } from '../core/contract/errors.js';
import { refuseRhachetCall } from '../rhachet/contract/refuseRhachetCall.js';
import { estimateTokensOfChars } from '../core/contract/tokens.js';
import { generateAnswer } from './generateAnswer.js';

/**
 * .what = BrainAtom.ask: one question on top of an optional prior episode, optionally with a zod output schema
 * .why = returns a NEW episode (prior exchanges + this one); the prior episode stays valid for branches and revives
 */
export const askAtom = async <TOutput = string>(
  input: {
    atom: Pick<BrainAtom, 'generate' | 'slug' | 'spec'>;
    say: string;
    on?: { episode: BrainEpisode };
    schema?: { output: z.ZodType<TOutput> };
    system?: string;
  },
  context: BrainContext = {},
): Promise<BrainOutput<TOutput, null>> => {
  const started = performance.now();
  refuseRhachetCall({ call: input, field: 'say', brain: input.atom.slug, method: 'ask' });
  if (input.on && input.atom.spec.continuation === false)
    throw new ContinuationNotSupportedError(
      `${input.atom.slug} does not support continuation: it cannot build on a prior episode. Continue this episode (error.ref.episode) on a brain that can, or ask without \`on\``,
      { episode: input.on.episode },
    );
  const prior = input.on ? assertBrainEpisode(input.on.episode) : null;
  const system = [input.system, input.schema ? instructSchema(input.schema.output) : undefined]
    .filter((part): part is string => !!part)
    .join('\n\n');
  const messages: BrainMessage[] = [...asPriorTurns(prior), { role: 'user', content: input.say }];
  // a long episode that cannot fit fails before the call, naming the limit and the way out
  const estimated = estimateTokensOfChars(system.length + messages.reduce((sum, message) => sum + message.content.length, 0));
  if (estimated > input.atom.spec.contextWindowTokens)
    throw new ContextOverflowError(
      `the episode (${prior?.exchanges.length ?? 0} exchanges) and this request are about ${estimated} tokens, more than ${input.atom.slug}'s context window of ${input.atom.spec.contextWindowTokens} tokens: continue it on a BrainRepl (which compacts a long episode into a recap), or start a new episode`,
      { tokens: input.atom.spec.contextWindowTokens, actual: estimated },
    );
  const { message, output, tokens, cash } = await generateAnswer(
    { atom: input.atom, request: { system: system || undefined, messages }, schema: input.schema?.output },
    context,
  );
  const text = message.content;

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
      cost: { time: { milliseconds: Math.round(performance.now() - started) }, cash },
    },
  };
};

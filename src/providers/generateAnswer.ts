import type { BrainAtom, BrainAtomGenerateInput } from '../core/contract/BrainAtom.js';
import type { BrainContext } from '../core/contract/BrainContext.js';
import type { BrainAssistantMessage, BrainMessage } from '../core/contract/BrainMessage.js';
import type { BrainCash, BrainTokens } from '../core/contract/BrainOutput.js';
import { addCash, addTokens, emptyTokens } from '../core/contract/tokens.js';
import { runStructuredOutputTurn } from './structured/runStructuredOutputTurn.js';
import type { OutputSchema } from './structured/structuredOutput.js';

/**
 * .what = one answer of an atom: a generation, validated against an output schema when one is given, through the
 *         structured-output turn (one corrective generation); an answer that calls tools is returned unjudged
 * .why = the one-call askers (askAtom, the rhachet atom) share it; a second miss throws OutputInvalidError; tokens and
 *        cash add up over both requests
 */
export const generateAnswer = async <TOutput>(
  input: { atom: Pick<BrainAtom, 'generate' | 'slug'>; request: BrainAtomGenerateInput; schema?: OutputSchema<TOutput> },
  context: BrainContext,
): Promise<{ message: BrainAssistantMessage; output: TOutput; tokens: BrainTokens; cash: BrainCash | null }> => {
  const messages: BrainMessage[] = [...input.request.messages];
  let tokens = emptyTokens();
  let cash = undefined as BrainCash | null | undefined;
  const generate = async () => {
    const generation = await input.atom.generate({ ...input.request, messages: [...messages] }, context);
    tokens = addTokens(tokens, generation.tokens);
    cash = cash === undefined ? generation.cash : addCash(cash, generation.cash);
    return generation.message;
  };
  const first = await generate();
  if (!input.schema) return { message: first, output: first.content as TOutput, tokens, cash: cash ?? null };
  const { run: message, verdict } = await runStructuredOutputTurn({
    slug: input.atom.slug,
    schema: input.schema,
    first,
    answerOf: (answer) => (answer.toolCalls.length ? null : answer.content),
    correct: async ({ run: answer, prompt }) => {
      messages.push({ role: 'assistant', content: answer.content, toolCalls: [] }, { role: 'user', content: prompt });
      return generate();
    },
  });
  if (verdict.kind === 'invalid') throw verdict.error;
  return { message, output: verdict.kind === 'valid' ? verdict.value : (message.content as TOutput), tokens, cash: cash ?? null };
};

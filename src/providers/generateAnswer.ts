import type { BrainAtom, BrainAtomGenerateInput } from '../core/contract/BrainAtom.js';
import type { BrainContext } from '../core/contract/BrainContext.js';
import type { BrainAssistantMessage, BrainMessage } from '../core/contract/BrainMessage.js';
import type { BrainCash, BrainTokens } from '../core/contract/BrainOutput.js';
import { OutputInvalidError } from '../core/contract/errors.js';
import { addCash, addTokens, emptyTokens } from '../core/contract/tokens.js';
import { validateAnswer, type OutputSchema } from './structuredOutput.js';

/**
 * .what = one answer of an atom: a generation, validated against an output schema when one is given, with one corrective
 *         retry that shows the model why its answer did not fit; an answer that calls tools is returned unjudged
 * .why = one structured-output retry for every one-call asker (askAtom, the rhachet atom); a second miss throws
 *        OutputInvalidError; tokens and cash add up over both requests
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
  const answered = (message: BrainAssistantMessage, output: TOutput) => ({ message, output, tokens, cash: cash ?? null });

  let message = await generate();
  if (!input.schema || message.toolCalls.length) return answered(message, message.content as TOutput);
  let verdict = validateAnswer(message.content, input.schema);
  if (!verdict.ok) {
    // one corrective retry: show the model why its answer did not fit
    messages.push(
      { role: 'assistant', content: message.content, toolCalls: [] },
      {
        role: 'user',
        content: `Your answer does not fit the required schema: ${verdict.reason}\nReply again with only the corrected JSON.`,
      },
    );
    message = await generate();
    if (message.toolCalls.length) return answered(message, message.content as TOutput);
    verdict = validateAnswer(message.content, input.schema);
  }
  if (!verdict.ok)
    throw new OutputInvalidError(
      `${input.atom.slug} did not return output that fits the schema, after one corrective retry: ${verdict.reason}`,
      message.content,
    );
  return answered(message, verdict.value);
};

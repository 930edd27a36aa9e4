import type { BrainExchangeStep, BrainExchangeToolCall } from '../contract/BrainExchange.js';
import type { BrainMessage } from '../contract/BrainMessage.js';

/**
 * the characters of tool results one exchange records, in all: past it, the longest results are cut to a fair share
 * .note = ~100k tokens, half of a 200k window: enough to continue from, and what a continuation would compact anyway
 */
export const EXCHANGE_RESULTS_MAX_CHARS = 400_000;

/** a result is never cut below this when the exchange's results are over EXCHANGE_RESULTS_MAX_CHARS */
export const EXCHANGE_RESULT_MIN_CHARS = 1_000;

/** the characters one string of a tool call's input keeps in the record (a `write`'s content, say) */
export const EXCHANGE_INPUT_STRING_MAX_CHARS = 8_000;

/**
 * the characters the tool inputs of one exchange keep, shared by its calls: with many calls, each string keeps less
 * (down to EXCHANGE_RESULT_MIN_CHARS), so 200 writes of large files do not keep 200 times EXCHANGE_INPUT_STRING_MAX_CHARS
 */
export const EXCHANGE_INPUTS_MAX_CHARS = 200_000;

/** .what = a text cut to its head (~60%) and tail when longer than maxChars, saying how much was cut when recorded */
const cutForRecord = (text: string, maxChars: number): string => {
  if (text.length <= maxChars) return text;
  const head = text.slice(0, Math.floor(maxChars * 0.6));
  const tail = text.slice(text.length - Math.floor(maxChars * 0.4));
  return `${head}\n[… ${text.length - head.length - tail.length} of ${text.length} characters cut when this turn was recorded …]\n${tail}`;
};

/** .what = the largest length each result may keep so that all of them fit the total: the longest are cut first */
const fairShareOf = (lengths: readonly number[], totalChars: number): number => {
  const sorted = [...lengths].sort((a, b) => a - b);
  let left = totalChars;
  for (const [index, length] of sorted.entries()) {
    const share = left / (sorted.length - index);
    if (length > share) return Math.max(EXCHANGE_RESULT_MIN_CHARS, Math.floor(share));
    left -= length;
  }
  return Infinity;
};

/** .what = a tool call's input with its strings cut to maxChars (keys and structure kept) */
const boundInput = (value: unknown, maxChars: number): unknown => {
  if (typeof value === 'string') return cutForRecord(value, maxChars);
  if (Array.isArray(value)) return value.map((item) => boundInput(item, maxChars));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, boundInput(item, maxChars)]));
  return value;
};

/**
 * .what = the steps of a turn from its messages (after its request): each assistant message that called tools, with
 *         the results that answered its calls, as the model read them; bounded in size (EXCHANGE_RESULTS_MAX_CHARS,
 *         EXCHANGE_INPUT_STRING_MAX_CHARS, EXCHANGE_INPUTS_MAX_CHARS), each cut saying so
 * .why = an exchange records the whole turn, so a continuation knows what was read and run; results are kept as the
 *        model saw them, cut where the loop cut them, never by reference to a spill file: a ref must stand alone on
 *        another machine, after the run's record is pruned
 */
export const asExchangeSteps = (messages: readonly BrainMessage[]): BrainExchangeStep[] => {
  const results = new Map<string, { content: string; isError: boolean }>();
  for (const message of messages)
    if (message.role === 'tool') results.set(message.toolCallId, { content: message.content, isError: message.isError });
  const callCount = messages.reduce((sum, message) => sum + (message.role === 'assistant' ? message.toolCalls.length : 0), 0);
  const inputStringChars = Math.max(
    EXCHANGE_RESULT_MIN_CHARS,
    Math.min(EXCHANGE_INPUT_STRING_MAX_CHARS, Math.floor(EXCHANGE_INPUTS_MAX_CHARS / Math.max(1, callCount))),
  );
  const steps = messages.flatMap((message) =>
    message.role === 'assistant' && message.toolCalls.length
      ? [
          {
            said: message.content,
            calls: message.toolCalls.map((call): BrainExchangeToolCall => ({
              name: call.name,
              input: boundInput(call.input, inputStringChars) as Record<string, unknown>,
              // a call the turn never answered (the run was stopped during it) says so
              result: results.get(call.id)?.content ?? '[no result: the turn ended before this call was answered]',
              isError: results.get(call.id)?.isError ?? true,
            })),
          },
        ]
      : [],
  );
  const share = fairShareOf(
    steps.flatMap((step) => step.calls.map((call) => call.result.length)),
    EXCHANGE_RESULTS_MAX_CHARS,
  );
  return share === Infinity
    ? steps
    : steps.map((step) => ({ ...step, calls: step.calls.map((call) => ({ ...call, result: cutForRecord(call.result, share) })) }));
};

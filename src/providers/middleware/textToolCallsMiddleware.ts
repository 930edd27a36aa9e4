import type { AtomMiddleware } from './wrapAtomCall.js';
import { recoverToolCallText } from './recoverToolCallText.js';

/**
 * .what = reads tool calls the model wrote as text (qwen3-coder xml, hermes json in <tool_call> tags) into calls, when the
 *         server returned none of its own; the markup already streamed as text is taken back (onTextReset) and the
 *         answer's own text streamed in its place
 * .why = a server without a tool parser returns such a model's calls as text: shown, never run. Native calls win, and a
 *        refusal runs no call, so neither is read for markup
 */
export const textToolCallsMiddleware: AtomMiddleware = {
  name: 'tool calls written as text',
  wrapCall: async ({ input, doCall }) => {
    const raw = await doCall(input);
    if (raw.stopReason === 'refusal' || raw.toolCalls.length) return raw;
    const recovered = recoverToolCallText(raw.text, input.request.tools ?? []);
    if (!recovered.toolCalls.length) return { ...raw, text: recovered.text };
    const { onTextDelta, onTextReset } = input.request;
    if (onTextDelta) {
      onTextReset?.();
      if (recovered.text) onTextDelta(recovered.text);
    }
    return {
      ...raw,
      text: recovered.text,
      toolCalls: recovered.toolCalls.map((call, index) => ({ ...call, id: `call_recovered_${Date.now().toString(36)}_${index}` })),
      stopReason: 'tool_calls',
    };
  },
};

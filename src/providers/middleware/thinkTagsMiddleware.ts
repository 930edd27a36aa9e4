import type { AtomMiddleware } from './wrapAtomCall.js';
import { genThinkFilter, splitThinkText } from './splitThinkText.js';

/**
 * .what = reads a <think>…</think> block at the start of the answer text as reasoning: streamed to onReasoningDelta, not
 *         onTextDelta, and split out of the final text into the generation's reasoning (after any reasoning the server
 *         sent apart, as reasoning_content)
 * .why = a server without a reasoning parser (vLLM, llama.cpp, Ollama serving Qwen3 or DeepSeek-R1) sends the model's
 *        thinking as plain content; left in, the thoughts would be the answer
 */
export const thinkTagsMiddleware: AtomMiddleware = {
  name: 'think tags in the text',
  wrapCall: async ({ input, doCall }) => {
    const { onTextDelta, onReasoningDelta } = input.request;
    const filter = genThinkFilter({ onText: onTextDelta, onReasoning: onReasoningDelta });
    const raw = await doCall({
      ...input,
      request: { ...input.request, onTextDelta: onTextDelta || onReasoningDelta ? filter.push : undefined },
    });
    filter.end();
    const think = splitThinkText(raw.text);
    const reasoningText = [raw.reasoning?.text ?? '', think.reasoning].filter((part) => part.trim()).join('\n\n');
    return { ...raw, text: think.text, ...(reasoningText ? { reasoning: { ...raw.reasoning, text: reasoningText } } : {}) };
  },
};

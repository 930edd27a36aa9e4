const OPEN = '<think>';
const CLOSE = '</think>';

/**
 * .what = a <think>…</think> prefix split out of an answer: the reasoning and the answer after it
 * .why = a server without a reasoning parser sends Qwen3's / DeepSeek-R1's thinking as plain content; left in, the
 *        model's thoughts would be the answer. As vLLM's reasoning parsers do, a missing <think> opener with a
 *        </think> present is thinking up to the closer, and an opener never closed (cut by the token limit) is all
 *        thinking
 */
export const splitThinkText = (text: string): { text: string; reasoning: string } => {
  const start = text.trimStart();
  if (start.startsWith(OPEN)) {
    const close = start.indexOf(CLOSE);
    if (close < 0) return { text: '', reasoning: start.slice(OPEN.length).trim() };
    return { text: start.slice(close + CLOSE.length).trimStart(), reasoning: start.slice(OPEN.length, close).trim() };
  }
  const close = text.indexOf(CLOSE);
  if (close >= 0 && !text.slice(0, close).includes(OPEN))
    return { text: text.slice(close + CLOSE.length).trimStart(), reasoning: text.slice(0, close).trim() };
  return { text, reasoning: '' };
};

/** .what = how long a suffix of text may be the start of tag (held back until the next delta says) */
const partialTagLength = (text: string, tag: string): number => {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length -= 1) if (tag.startsWith(text.slice(-length))) return length;
  return 0;
};

/**
 * .what = a streaming filter for content deltas: text inside a leading <think> block goes to onReasoning, the rest to
 *         onText
 * .why = when onTextDelta shows the answer as it streams, the model's thinking is not shown as answer text
 * .note = a thinking block without its <think> opener cannot be known until </think> arrives, so its text streams as
 *         answer text; the final answer is split all the same (splitThinkText)
 */
export const genThinkFilter = (input: { onText?: (text: string) => void; onReasoning?: (text: string) => void }) => {
  let state: 'start' | 'think' | 'answer' = 'start';
  let buffer = '';
  // the answer after </think> starts at its first non-blank character, as splitThinkText has it
  let answerStarted = false;
  const emitText = (text: string) => {
    const shown = answerStarted ? text : text.trimStart();
    if (!shown) return;
    answerStarted = true;
    input.onText?.(shown);
  };
  const push = (delta: string): void => {
    buffer += delta;
    if (state === 'start') {
      const start = buffer.trimStart();
      if (start.startsWith(OPEN)) {
        state = 'think';
        buffer = start.slice(OPEN.length);
      } else if (OPEN.startsWith(start)) return;
      else {
        state = 'answer';
        answerStarted = true;
        const text = buffer;
        buffer = '';
        input.onText?.(text);
        return;
      }
    }
    if (state === 'think') {
      const close = buffer.indexOf(CLOSE);
      if (close >= 0) {
        if (close > 0) input.onReasoning?.(buffer.slice(0, close));
        const rest = buffer.slice(close + CLOSE.length);
        buffer = '';
        state = 'answer';
        if (rest) emitText(rest);
        return;
      }
      const held = partialTagLength(buffer, CLOSE);
      const ready = buffer.slice(0, buffer.length - held);
      buffer = buffer.slice(buffer.length - held);
      if (ready) input.onReasoning?.(ready);
      return;
    }
    const text = buffer;
    buffer = '';
    emitText(text);
  };
  /** the stream ended: text held back as a possible tag start is released where it belongs */
  const end = (): void => {
    if (!buffer) return;
    if (state === 'think') input.onReasoning?.(buffer);
    else emitText(buffer);
    buffer = '';
  };
  return { push, end };
};

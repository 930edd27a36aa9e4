import type { BrainMessage } from '../../core/contract/BrainMessage.js';

/** .what = messages as a readable transcript, for a summarizer to read */
export const asTranscriptText = (messages: readonly BrainMessage[]): string =>
  messages
    .map((message) => {
      if (message.role === 'assistant')
        return [
          `assistant: ${message.content}`,
          ...message.toolCalls.map((call) => `assistant called ${call.name}(${JSON.stringify(call.input)})`),
        ].join('\n');
      if (message.role === 'tool') return `result of ${message.toolName}${message.isError ? ' (error)' : ''}: ${message.content}`;
      return `${message.role}: ${message.content}`;
    })
    .join('\n\n');

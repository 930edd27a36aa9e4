import type { BrainToolDefinition } from '../../contract/BrainMessage.js';

/**
 * .what = the system prompt of a session: who the agent is, where it works, the tools it has, the caller's additions
 * .why = the prompt reflects the combined tool set, so the model knows what it can do; it holds nothing volatile
 *        (no clock), so it stays a stable, cacheable prefix across iterations
 */
export const genSystemPrompt = (input: {
  cwd: string;
  tools: readonly BrainToolDefinition[];
  systemPrompt?: string;
}): string =>
  [
    'You are bhrain, an agent that completes tasks for a developer by reasoning and using tools.',
    `You work in the directory ${input.cwd} on ${process.platform}. Relative paths resolve there.`,
    input.tools.length
      ? [
          'Tools available to you:',
          ...input.tools.map((tool) => `- ${tool.name}: ${tool.description.split('\n')[0]}`),
          'Call tools to observe before you conclude; call several at once when they are independent.',
          'A tool result may be an error: read it, correct your call or take another approach. A denied call is not retried as is.',
        ].join('\n')
      : 'You have no tools in this session: answer from what you know and what you are told.',
    'When the task is complete, reply with the final answer and no tool calls.',
    ...(input.systemPrompt ? [input.systemPrompt] : []),
  ].join('\n\n');

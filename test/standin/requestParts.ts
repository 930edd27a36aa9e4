// readers of what a request to the stand-in carried, whichever wire protocol carried it
import type { StandinRequest } from './standin.js';

/** .what = the system prompt of a request: anthropic's system (a string or text blocks), openai's system messages */
export const systemOf = (request: StandinRequest): string =>
  request.protocol === 'anthropic'
    ? typeof request.body.system === 'string'
      ? request.body.system
      : (request.body.system ?? []).map((block: { text: string }) => block.text).join('\n')
    : request.body.messages
        .filter((message: { role: string }) => message.role === 'system')
        .map((message: { content: string }) => message.content)
        .join('\n');

/** .what = the names of the tools a request offered, sorted */
export const toolNamesOf = (request: StandinRequest): string[] =>
  (request.body.tools ?? [])
    .map((tool: { name?: string; function?: { name: string } }) => (request.protocol === 'anthropic' ? tool.name : tool.function!.name))
    .sort();

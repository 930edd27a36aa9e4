import type { BrainToolDefinition } from '../core/contract/BrainMessage.js';
import { BadRequestError } from '../core/contract/errors.js';
import { checkToolInput } from './readToolArguments.js';

/** .what = the header the examples sit under in a rendered description */
const EXAMPLES_HEADER = 'Examples:';

/**
 * .what = the description the model reads: the tool's description, then its examples, one line each (`- what: {input}`)
 * .why = one rendering for every supplier, so claude and OpenAI-compatible models learn the same usage; an example that
 *        does not fit the tool's own schema would teach the model a wrong call, so it fails loud, naming the tool and example
 */
export const renderToolDescription = (tool: BrainToolDefinition): string => {
  if (!tool.examples?.length) return tool.description;
  const lines = tool.examples.map((example, index) => {
    const checked = checkToolInput({ value: example?.input, name: tool.name, tools: [tool] });
    if (checked.inputError)
      throw new BadRequestError(
        `example ${index + 1} of tool ${tool.name} does not fit the tool's input schema (${checked.inputError}). Fix or remove the example in the tool definition`,
      );
    const input = JSON.stringify(example.input);
    return example.description ? `- ${example.description.trim()}: ${input}` : `- ${input}`;
  });
  return `${tool.description.trimEnd()}\n\n${EXAMPLES_HEADER}\n${lines.join('\n')}`;
};

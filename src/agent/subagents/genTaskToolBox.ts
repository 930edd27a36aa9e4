import { TASK_TOOL_NAME } from '../constants.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { deferInput, makeTool } from '../tool/makeTool.js';
import { toolBoxOf } from '../tool/executeTool.js';
import { loadToolDescription } from '../tool/loadToolDescription.js';
import type { BhrainSubagentTypeResolved } from './BhrainSubagentDefinition.js';

const TASK_DESCRIPTION = loadToolDescription(new URL('./task.txt', import.meta.url));

/** .what = the task tool's description, with the subagent types it offers listed */
const describeTask = (types: readonly BhrainSubagentTypeResolved[]): string =>
  TASK_DESCRIPTION.replace('{types}', types.map((type) => `- ${type.name}: ${type.description}`).join('\n'));

/** .what = the task tool's input: a label, the whole task, and the subagent type, one of those offered */
export const genTaskInput = (names: readonly string[]) =>
  deferInput(
    {
      type: 'object',
      properties: {
        description: { type: 'string', description: 'a short label for the task, 3-5 words' },
        prompt: {
          type: 'string',
          description: 'the task, with everything the subagent needs to know: it sees none of this conversation',
        },
        subagent_type: { type: 'string', enum: [...names], description: 'which kind of subagent does the task' },
      },
      required: ['description', 'prompt', 'subagent_type'],
      additionalProperties: false,
    },
    async () => (await import('../toolboxes/toolInputs.js')).taskZodInput(names),
  );

/**
 * .what = the task tool: spawns a subagent of the chosen type through the session's spawn capability (its tool
 *         context) and answers with the subagent's final answer
 * .why = the parent's context gets the child's answer only (bounded by the loop's truncation like any tool result); the
 *        session records the subagent. Several task calls of one turn run at once: its effect is delegate, so
 *        runToolCalls runs it with the turn's first, concurrent phase
 */
export const genTaskToolBox = (input: { types: readonly BhrainSubagentTypeResolved[] }): BhrainToolBox => {
  const names = input.types.map((type) => type.name);
  const task = makeTool({
    name: TASK_TOOL_NAME,
    description: describeTask(input.types),
    input: genTaskInput(names),
    effect: 'delegate',
    execute: async ({ description, prompt, subagent_type: type }, context) => {
      if (!context.spawn)
        return { success: false, output: `${TASK_TOOL_NAME} cannot spawn a subagent in this session. No subagent was started.` };
      const spawned = await context.spawn({ callId: context.callId, type, description, prompt });
      return { success: spawned.success, output: spawned.output };
    },
  });
  return toolBoxOf({ name: 'subagents', tools: [task] });
};

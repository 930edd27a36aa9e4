import { TASK_TOOL_NAME } from '../constants.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { loadToolDescription } from '../tool/loadToolDescription.js';
import type { BhrainSubagentTypeResolved } from './BhrainSubagentDefinition.js';

const TASK_DESCRIPTION = loadToolDescription(new URL('./task.txt', import.meta.url));

/** .what = the task tool's description, with the subagent types it offers listed */
const describeTask = (types: readonly BhrainSubagentTypeResolved[]): string =>
  TASK_DESCRIPTION.replace('{types}', types.map((type) => `- ${type.name}: ${type.description}`).join('\n'));

/** .what = the text of a non-empty string field, or null */
const textOf = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value : null);

/**
 * .what = the task tool: spawns a subagent of the chosen type through the session's spawn capability (its tool
 *         context) and answers with the subagent's final answer
 * .why = the parent's context gets the child's answer only (bounded by the loop's truncation like any tool result); the
 *        session records the subagent. Several task calls of one turn run at once: task is neither a write nor a read,
 *        so runToolCalls runs it with the turn's first, concurrent phase
 */
export const genTaskToolBox = (input: { types: readonly BhrainSubagentTypeResolved[] }): BhrainToolBox => {
  const names = input.types.map((type) => type.name);
  return {
    name: 'subagents',
    definitions: [
      {
        name: TASK_TOOL_NAME,
        description: describeTask(input.types),
        inputSchema: {
          type: 'object',
          properties: {
            description: { type: 'string', description: 'a short label for the task, 3-5 words' },
            prompt: {
              type: 'string',
              description: 'the task, with everything the subagent needs to know: it sees none of this conversation',
            },
            subagent_type: { type: 'string', enum: names, description: 'which kind of subagent does the task' },
          },
          required: ['description', 'prompt', 'subagent_type'],
          additionalProperties: false,
        },
      },
    ],
    execute: async ({ call }, context) => {
      const given = (call.input ?? {}) as Record<string, unknown>;
      const description = textOf(given.description);
      const prompt = textOf(given.prompt);
      const type = input.types.find((candidate) => candidate.name === given.subagent_type);
      const wrong = [
        ...(description ? [] : ['description must be a non-empty string (a 3-5 word label)']),
        ...(prompt ? [] : ['prompt must be a non-empty string: the whole task, as the subagent sees nothing else']),
        ...(type ? [] : [`subagent_type must be one of ${names.join(', ')}; got ${JSON.stringify(given.subagent_type ?? null)}`]),
      ];
      if (wrong.length)
        return { callId: call.id, success: false, output: `invalid ${TASK_TOOL_NAME} call: ${wrong.join('; ')}. No subagent was started.` };
      if (!context.spawn)
        return {
          callId: call.id,
          success: false,
          output: `${TASK_TOOL_NAME} cannot spawn a subagent in this session. No subagent was started.`,
        };
      const spawned = await context.spawn({ callId: call.id, type: type!.name, description: description!, prompt: prompt! });
      return { callId: call.id, success: spawned.success, output: spawned.output };
    },
  };
};

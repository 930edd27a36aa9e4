import type { BhrainSubagentRecord } from '../BhrainSessionResult.js';
import { TASK_TOOL_NAME } from '../constants.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { loadToolDescription } from '../tool/loadToolDescription.js';
import type { BhrainSubagentTypeResolved } from './BhrainSubagentDefinition.js';
import { runSubagent, type SubagentParent } from './runSubagent.js';

const TASK_DESCRIPTION = loadToolDescription(new URL('./task.txt', import.meta.url));

/** .what = the task tool's description, with the subagent types it offers listed */
const describeTask = (types: readonly BhrainSubagentTypeResolved[]): string =>
  TASK_DESCRIPTION.replace('{types}', types.map((type) => `- ${type.name}: ${type.description}`).join('\n'));

/** .what = the text of a non-empty string field, or null */
const textOf = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value : null);

/**
 * .what = the task tool of one session: spawns a subagent of the chosen type and answers with its final answer
 * .why = the parent's context gets the child's answer only (bounded by the loop's truncation like any tool result); the
 *        child's record goes to onFinished, for the parent's result and metrics. Several task calls of one turn run at
 *        once: task is neither a write nor a read, so runToolCalls runs it with the turn's first, concurrent phase
 */
export const genTaskToolBox = (
  input: { types: readonly BhrainSubagentTypeResolved[] },
  parent: SubagentParent & { onFinished: (finished: { record: BhrainSubagentRecord; descendants: BhrainSubagentRecord[] }) => void },
): BhrainToolBox => {
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
      const done = await runSubagent(
        { callId: call.id, type: type!, description: description!, prompt: prompt!, signal: context.signal },
        parent,
      );
      parent.onFinished({ record: done.record, descendants: done.descendants });
      return { callId: call.id, success: done.success, output: done.output };
    },
  };
};

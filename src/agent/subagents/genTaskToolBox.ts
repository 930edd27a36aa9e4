import * as z from 'zod/mini';

import { TASK_TOOL_NAME } from '../constants.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { defineTool } from '../tool/defineTool.js';
import { toolBoxOf } from '../tool/executeTool.js';
import { loadToolDescription } from '../tool/loadToolDescription.js';
import type { BhrainSubagentTypeResolved } from './BhrainSubagentDefinition.js';

const TASK_DESCRIPTION = loadToolDescription(new URL('./task.txt', import.meta.url));

/** .what = the task tool's description, with the subagent types it offers listed */
const describeTask = (types: readonly BhrainSubagentTypeResolved[]): string =>
  TASK_DESCRIPTION.replace('{types}', types.map((type) => `- ${type.name}: ${type.description}`).join('\n'));

/** .what = the task tool's input: a label, the whole task, and the subagent type, one of those offered */
const genTaskInput = (names: readonly string[]) =>
  z.strictObject({
    description: z.string().check(
      z.refine((value) => value.trim() !== '', 'must not be empty: a 3-5 word label'),
      z.describe('a short label for the task, 3-5 words'),
    ),
    prompt: z.string().check(
      z.refine((value) => value.trim() !== '', 'must not be empty: the whole task, as the subagent sees nothing else'),
      z.describe('the task, with everything the subagent needs to know: it sees none of this conversation'),
    ),
    subagent_type: z.enum(names as [string, ...string[]]).check(z.describe('which kind of subagent does the task')),
  });

/**
 * .what = the task tool: spawns a subagent of the chosen type through the session's spawn capability (its tool
 *         context) and answers with the subagent's final answer
 * .why = the parent's context gets the child's answer only (bounded by the loop's truncation like any tool result); the
 *        session records the subagent. Several task calls of one turn run at once: its effect is delegate, so
 *        runToolCalls runs it with the turn's first, concurrent phase
 */
export const genTaskToolBox = (input: { types: readonly BhrainSubagentTypeResolved[] }): BhrainToolBox => {
  const names = input.types.map((type) => type.name);
  const task = defineTool({
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

import { TASK_TOOL_NAME } from '../constants.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import type { BhrainToolRegistry } from '../tool/genToolRegistry.js';
import type { BhrainSubagentsResolved } from './BhrainSubagentDefinition.js';
import { genTaskToolBox } from './genTaskToolBox.js';

/**
 * .what = a session's registry with the task tool added: offered (listed in the definitions) below the depth limit, or
 *         only answering, with a failed result that says why, at it
 * .why = the task tool is made per session (it runs children of that session), while the toolboxes beneath stay the
 *        brain's, added and removed at runtime as before; at the limit the model is not offered the tool, and a call to
 *        it anyway reads why it cannot spawn rather than "tool not found"
 */
export const withTaskTool = (registry: BhrainToolRegistry, task: { box: BhrainToolBox; offered: boolean }): BhrainToolRegistry => ({
  add: registry.add,
  remove: registry.remove,
  boxes: () => (task.offered ? [...registry.boxes(), task.box] : registry.boxes()),
  definitions: () => (task.offered ? [...registry.definitions(), ...task.box.definitions] : registry.definitions()),
  find: (toolName) => (toolName === TASK_TOOL_NAME ? task.box : registry.find(toolName)),
});

/** .what = the task tool of a session at the depth limit: not offered, and a call to it is a failed result */
export const genTaskRefusal = (input: { maxDepth: number }): BhrainToolBox => ({
  name: 'subagents',
  definitions: [],
  execute: async ({ call }) => ({
    callId: call.id,
    success: false,
    output: `${TASK_TOOL_NAME} is not available in this session: it is a subagent at the depth limit (subagents.maxDepth = ${input.maxDepth}), so it cannot spawn subagents of its own. Do the work yourself with the tools you have.`,
  }),
});

/**
 * .what = the registry a session works with: its toolboxes, plus the task tool when config.subagents is on (offered below
 *         subagents.maxDepth, refusing at it); the toolboxes alone when it is off
 * .why = one place decides what a session at a given depth is offered; the spawning itself is the session's (the spawn
 *        capability of the tool context), so this module needs nothing of the loop
 */
export const attachTaskTool = (input: {
  registry: BhrainToolRegistry;
  subagents: BhrainSubagentsResolved | null;
  depth: number;
}): BhrainToolRegistry => {
  const { subagents } = input;
  if (!subagents) return input.registry;
  const offered = input.depth < subagents.maxDepth;
  const box = offered ? genTaskToolBox({ types: subagents.types }) : genTaskRefusal({ maxDepth: subagents.maxDepth });
  return withTaskTool(input.registry, { box, offered });
};

import { BadRequestError } from '../../core/contract/errors.js';
import { runSubagent } from '../subagents/runSubagent.js';
import type { BhrainSpawn } from '../tool/BhrainToolBox.js';
import { recordSubagent, type SessionState } from './SessionState.js';

/**
 * .what = the spawn capability a session gives its tools (docs/design/loop.md#subagents): runs a subagent of a configured type as a
 *         fork of this session, published live in this session's entity; undefined when subagents are off or the
 *         session is at subagents.maxDepth
 * .why = the task tool reaches the loop through its tool context, so no module of the tools imports the loop
 */
export const spawnOf = (state: SessionState): BhrainSpawn | undefined => {
  const { subagents } = state.config;
  if (!subagents || state.depth >= subagents.maxDepth) return undefined;
  return async (request) => {
    const type = subagents.types.find((candidate) => candidate.name === request.type);
    if (!type)
      throw new BadRequestError(
        `unknown subagent type '${request.type}': this session can spawn ${subagents.types.map((known) => known.name).join(', ')}`,
      );
    return runSubagent(
      { callId: request.callId, type, description: request.description, prompt: request.prompt },
      {
        uuid: state.uuid,
        config: { ...state.config, ...state.plugins() },
        boxes: state.toolBoxes.boxes(),
        context: state.context,
        signal: state.stop.signal,
        emit: state.emit,
        run: (child) => state.runChild(child, state.fork({ log: child.log, spillDir: child.spillDir })),
        record: (subagent) => recordSubagent(state, subagent),
      },
    );
  };
};

import type { BrainLog } from '../../core/contract/BrainContext.js';
import { genBrainAtom } from '../../providers/genBrainAtom.js';
import { findAgentFiles } from '../instructions/findAgentFiles.js';
import type { AgentFiles } from './readAgentFiles.js';

/**
 * .what = finds and reads the agent files for a working directory, as the CLI does: `.bhrain/agents/*.md` and
 *         `.claude/agents/*.md` in cwd and every parent up to the repository root, then the user's
 *         `<config dir>/agents/*.md`; `types` goes to config.subagents.types
 * .why = agent files in Claude Code's format work as they are; every bad file, unknown tool or unknown model is a
 *        warning (on context.log and in `warnings`), never a crash. parentAtom (the slug of the atom the session runs on)
 *        decides what `model: sonnet|opus|haiku` means: claude's on a claude atom, the parent's atom on another
 */
export const loadAgentFiles = async (
  input: { cwd: string; parentAtom?: string },
  context: { env?: Record<string, string | undefined>; log?: BrainLog } = {},
): Promise<AgentFiles> => {
  const files = await findAgentFiles({ cwd: input.cwd, kind: 'agents' }, context);
  if (!files.length) return { types: [], found: [], warnings: [] };
  const { readAgentFiles } = await import('./readAgentFiles.js');
  return readAgentFiles(files, { parentAtom: input.parentAtom, checkAtom: (slug) => genBrainAtom({ slug }) }, context);
};

import type { BrainToolDefinition } from '../core/contract/BrainMessage.js';
import type { BhrainGitStatus } from './git/readGitStatus.js';
import { fitSkillListing, formatSkillLine, type BhrainAgentSkill } from './agent-skills/BhrainAgentSkill.js';
import { SKILL_TOOL_NAME, SKILLS_LISTING_MAX_CHARS } from './constants.js';

/**
 * .what = the <skills> block: each skill's name and description within the listing's budget, and a notice when some are
 *         left out; never a skill's body
 */
const describeSkills = (skills: readonly BhrainAgentSkill[]): string => {
  const { listed, leftOut } = fitSkillListing(skills);
  return [
    '<skills>',
    `Agent Skills: instructions for particular kinds of task. When the task matches a skill's description, call the ${SKILL_TOOL_NAME} tool with its name first and follow the instructions it returns; read the files beside the skill only when they call for them.`,
    ...listed.map(formatSkillLine),
    ...(leftOut.length
      ? [
          `[bhrain: ${leftOut.length} more skill${leftOut.length === 1 ? ' is' : 's are'} not listed here: this list is capped at ${SKILLS_LISTING_MAX_CHARS} characters. Call ${SKILL_TOOL_NAME} with a name not listed to see every name.]`,
        ]
      : []),
    '</skills>',
  ].join('\n');
};

/** .what = one line on the repository the working directory is in: root, branch, and how dirty the tree is (counts only) */
const describeGitStatus = (git: BhrainGitStatus): string => {
  const head = git.branch
    ? `branch ${git.branch}${git.commit ? '' : ' (no commits yet)'}`
    : `detached HEAD${git.commit ? ` at ${git.commit}` : ''}`;
  const counts = [
    ...(git.conflicted ? [`${git.conflicted} conflicted`] : []),
    ...(git.changed ? [`${git.changed} changed`] : []),
    ...(git.untracked ? [`${git.untracked} untracked`] : []),
  ];
  return `It is in the git repository ${git.root}: ${head}; working tree ${counts.length ? `dirty (${counts.join(', ')})` : 'clean'}, as of the session's start.`;
};

/** .what = bhrain's own opening of the system prompt: who the agent is, where it works, its tools, when to stop */
const genOpening = (input: {
  cwd: string;
  addDirs?: readonly string[];
  tools: readonly BrainToolDefinition[];
  git?: BhrainGitStatus | null;
}): string[] => [
  'You are bhrain, an agent that completes tasks for a developer by reasoning and using tools.',
  [
    `You work in the directory ${input.cwd} on ${process.platform}. Relative paths resolve there.`,
    ...(input.git ? [describeGitStatus(input.git)] : []),
    ...(input.addDirs?.length ? [`You may also change files in ${input.addDirs.join(', ')}.`] : []),
  ].join(' '),
  input.tools.length
    ? [
        'Tools available to you:',
        ...input.tools.map((tool) => `- ${tool.name}: ${tool.description.split('\n')[0]}`),
        'Call tools to observe before you conclude; call several at once when they are independent.',
        'A tool result may be an error: read it, correct your call or take another approach. A denied call is not retried as is.',
      ].join('\n')
    : 'You have no tools in this session: answer from what you know and what you are told.',
  'When the task is complete, reply with the final answer and no tool calls.',
];

/**
 * .what = the system prompt of a session: who the agent is, where it works (and the git state there), the tools it has,
 *         the project's instructions, the Agent Skills it may load (names and descriptions), the caller's additions
 * .why = the prompt reflects the combined tool set, so the model knows what it can do; it holds nothing that changes
 *        within a session (no clock; the git state is read once, at its start), so it stays a stable, cacheable prefix
 *        across iterations. The project instructions live here, never in the messages, so no compaction removes them
 */
export const genSystemPrompt = (input: {
  cwd: string;
  /** the directories the session may change besides cwd */
  addDirs?: readonly string[];
  tools: readonly BrainToolDefinition[];
  /** the repository the cwd is in, when known */
  git?: BhrainGitStatus | null;
  /** the project's instructions (config.instructions), placed in a <project-instructions> block */
  instructions?: string;
  /** the Agent Skills to list by name and description; listed only when the skill tool is among the tools */
  skills?: readonly BhrainAgentSkill[];
  systemPrompt?: string;
  /** replaces bhrain's own opening (who, where, the tools, when to stop): config.baseSystemPrompt */
  baseSystemPrompt?: string;
}): string =>
  [
    ...(input.baseSystemPrompt ? [input.baseSystemPrompt] : genOpening(input)),
    ...(input.instructions?.trim()
      ? [
          [
            '<project-instructions>',
            "The project's instructions (AGENTS.md, CLAUDE.md), most general first: follow them. Where two conflict, the later one wins; the user's request wins over them all.",
            input.instructions.trim(),
            '</project-instructions>',
          ].join('\n'),
        ]
      : []),
    ...(input.skills?.length && input.tools.some((tool) => tool.name === SKILL_TOOL_NAME) ? [describeSkills(input.skills)] : []),
    ...(input.systemPrompt ? [input.systemPrompt] : []),
  ].join('\n\n');
